"""The sessions screen: the recorded boots of the sessions folder, to filter, replay, compare,
set as the baseline, relabel or delete.

Reading and analysing the files runs on a worker, which posts the summaries in batches; the
handlers own the list, the marks and the filter. Unchanged files are not analysed again when
the screen comes back (or opens anew: the summaries are kept for the next sessions screen), and
a file a live screen is recording is analysed once, not at every opening.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from bootlab.core.analysis.catalog import SessionSummary, Stamp, summarize, summarize_folder
from bootlab.core.board.settings import Setting
from bootlab.core.capture.session import INDEX_PART, SessionError, append_meta
from bootlab.core.capture.session_index import index_path
from bootlab.core.capture.sources import SourceError
from bootlab.core.files.config import profile_dirs
from bootlab.core.files.state import load_state, save_state
from bootlab.session.boot_state import session_file, sessions_folder
from bootlab.session.replay import Replay, open_replay
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.messages import BaselineChanged
from bootlab.ui.screens.compare import CompareScreen
from bootlab.ui.screens.dialogs import ConfirmDialog, TextDialog
from bootlab.ui.screens.help import KeyedScreen
from bootlab.ui.widgets.key_footer import KeyFooter
from bootlab.ui.widgets.session_list import SessionList

BATCH_S = 0.2
"""The list grows by what was analysed in this long."""


class SessionsScreen(KeyedScreen):
    """Every session in one folder, with its key times."""

    HELP_TITLE = "Sessions screen (F2)"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Replay", id="open-session", tooltip="replay the session"),
        Binding("space", "mark", "Mark", id="mark-session",
                tooltip="mark or unmark for comparison"),
        Binding("a", "mark_shown", "Mark all", id="mark-shown",
                tooltip="mark every session shown (again: unmark them)"),
        Binding("c", "compare", "Compare", id="compare-marked",
                tooltip="compare the marked sessions"),
        Binding("b", "baseline", "Baseline", id="set-baseline",
                tooltip="make the session the baseline (again: no baseline)"),
        Binding("r", "relabel", "Relabel", id="relabel-session", tooltip="change the label"),
        Binding("delete", "delete", "Delete", id="delete-session",
                tooltip="delete the session file (asks first)"),
        Binding("slash", "filter", "Filter", id="filter-sessions",
                tooltip="filter by label, board, place, date or file name"),
        Binding("escape", "back", "Back", id="back", tooltip="back (from the filter: the list)"),
        Binding("question_mark", "help", "Keys", id="help", tooltip="these keys"),
    ]

    kept: ClassVar[dict[Path, tuple[Stamp, SessionSummary]]] = {}
    """Every summary read, with its file's stamp, for the next sessions screen (F2 opens a new
    one): its list shows at once, and only what changed is read again."""

    @dataclass
    class Loaded(Message):
        """Summaries from the worker; `done` once the folder has been read through."""

        summaries: list[tuple[SessionSummary, Stamp]]
        done: bool

    @dataclass
    class ReplayReady(Message):
        """A session was opened for replay (or `error` says why not)."""

        replay: Replay | None
        error: str | None = None

    @dataclass
    class Relabelled(Message):
        """A session's label was changed (or `error` says why not)."""

        summary: SessionSummary | None
        error: str | None = None

    def __init__(self, folder: Path, settings: list[Setting]) -> None:
        """Args:
            folder: the sessions folder.
            settings: the one-key settings (for the replays opened here).
        """
        super().__init__()
        self.folder = folder
        self.settings = settings
        kept = {path: read for path, read in self.kept.items() if path.parent == folder}
        self.summaries: dict[Path, SessionSummary] = {
            path: summary for path, (_stamp, summary) in kept.items()}
        """Every session read, by path."""
        self.stamps: dict[Path, Stamp] = {path: stamp for path, (stamp, _summary) in kept.items()}
        """What each file was like when it was read (a changed file is read again)."""
        self.recording: set[Path] = set()
        """Files live screens are recording (as their summaries were first read)."""
        self.marked: set[Path] = set()
        self.baseline: Path | None = None
        self.reading = False
        """The folder is being read (not Textual's `loading`, which would cover the screen
        with a spinner that a terminal may never see taken away)."""
        self._read_now: set[Path] = set()
        """Sessions the current reading of the folder has reached."""

    def compose(self) -> ComposeResult:
        """Title, filter, the table, the highlighted session's details, the keys."""
        yield Static(id="sessions-title")
        yield Input(placeholder="filter: words in the label, board, date or file name (/)",
                    id="sessions-filter")
        yield SessionList("sessions-table")
        yield Static(id="sessions-detail")
        yield KeyFooter()

    @property
    def table(self) -> SessionList:
        """The list."""
        return self.query_one(SessionList)

    def on_mount(self) -> None:
        """The focus on the list."""
        self.table.focus()

    def on_screen_resume(self) -> None:
        """(Re)read the folder: sessions may have been recorded since."""
        self.baseline = load_state().baseline(self.folder)
        self.reading = True
        self.recording = self._recording()
        self._read_now.clear()
        self._fill()
        self._load({path: (self.stamps[path], summary) for path, summary in self.summaries.items()
                    if path in self.stamps}, self.recording)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions")
    def _load(self, known: dict[Path, tuple[Stamp, SessionSummary]],
              recording: set[Path]) -> None:
        worker = get_current_worker()
        batch: list[tuple[SessionSummary, Stamp]] = []
        last_post = time.monotonic()
        for read in summarize_folder(self.folder, known, recording):
            if worker.is_cancelled:
                return
            batch.append(read)
            if time.monotonic() - last_post >= BATCH_S:
                self.post_message(self.Loaded(batch, done=False))
                batch, last_post = [], time.monotonic()
        self.post_message(self.Loaded(batch, done=True))

    def on_sessions_screen_loaded(self, message: Loaded) -> None:
        """Add (or update) the summaries; once done, forget the files that are gone."""
        for summary, stamp in message.summaries:
            self.summaries[summary.path] = summary
            self.stamps[summary.path] = stamp
            self.kept[summary.path] = (stamp, summary)
            self._read_now.add(summary.path)
        if message.done:
            self.reading = False
            self._forget(set(self.summaries) - self._read_now)
        self._fill()

    def _forget(self, gone: set[Path]) -> None:
        for path in gone:
            self.summaries.pop(path, None)
            self.stamps.pop(path, None)
            self.kept.pop(path, None)
            self.marked.discard(path)

    # --- the table ----------------------------------------------------------------------

    def shown(self) -> list[SessionSummary]:
        """The sessions the filter lets through, newest file name first."""
        words = self.query_one("#sessions-filter", Input).value.split()
        ordered = sorted(self.summaries.values(), key=lambda s: s.path.name, reverse=True)
        return [s for s in ordered if s.matches(words)]

    def _fill(self) -> None:
        """Show the filtered sessions."""
        self.table.show(self.shown(), self.marked, self.baseline)
        self._title()
        self._detail()

    def _refresh_row(self, path: Path) -> None:
        if path in self.summaries:
            self.table.update(self.summaries[path], path in self.marked, path == self.baseline)
        self._title()
        self._detail()

    def current(self) -> Path | None:
        """The session under the cursor."""
        return self.table.current()

    def marked_paths(self) -> list[Path]:
        """The marked sessions, oldest first."""
        return sorted(self.marked, key=lambda path: path.name)

    def _title(self) -> None:
        shown, total = self.table.row_count, len(self.summaries)
        parts = [f"sessions in {self.folder}",
                 f"{shown} of {total}" if shown != total else f"{total}"]
        if self.reading:
            parts.append("reading…")
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        parts.append(f"baseline {self.baseline.name}" if self.baseline else "no baseline")
        parts.append("Enter replays")
        self.query_one("#sessions-title", Static).update(Text(" · ".join(parts)))

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._detail()

    def _detail(self) -> None:
        path = self.current()
        summary = self.summaries.get(path) if path else None
        text = Text(no_wrap=True, overflow="ellipsis")
        if not self.summaries and not self.reading:
            text.append(f"no sessions in {self.folder}: `bootlab PORT` or `bootlab record PORT` "
                        "records them (--sessions DIR for another folder)")
        elif summary is not None:
            text.append(summary.path.name, style="bold")
            if summary.error is not None:
                text.append(f"\n{summary.error}")
            else:
                text.append(f"  {len(summary.milestones)} milestones")
                if summary.incomplete:
                    text.append(f"  {summary.incomplete}", style="bold")
                text.append(f"\n{summary.settings or 'settings as the board was'}")
                if summary.source:
                    text.append(f" · {summary.source}")
                for notice in summary.notices[:1]:
                    text.append(f" · {notice}", style="italic")
                if path in self.recording:
                    text.append(" · being recorded: as first read here (the live screen has "
                                "the rest)", style="italic")
        self.query_one("#sessions-detail", Static).update(text)

    @on(Input.Changed, "#sessions-filter")
    def _filtered(self) -> None:
        self._fill()

    @on(Input.Submitted, "#sessions-filter")
    def _filter_done(self) -> None:
        self.table.focus()

    # --- actions ------------------------------------------------------------------------

    def action_filter(self) -> None:
        """Type a filter."""
        self.set_focus(self.query_one("#sessions-filter", Input))   # keys typed ahead go to it

    def action_back(self) -> None:
        """From the filter back to the list; from the list back to the screen before."""
        if isinstance(self.focused, Input):
            self.table.focus()
        else:
            self.app.pop_screen()

    def action_mark(self) -> None:
        """Mark or unmark the session under the cursor, then move down."""
        path = self.current()
        if path is None:
            return
        self.marked.symmetric_difference_update({path})
        self._refresh_row(path)
        self.table.action_cursor_down()

    def action_mark_shown(self) -> None:
        """Mark every session shown; when all are marked already, unmark them."""
        shown = {s.path for s in self.shown()}
        if shown <= self.marked:
            self.marked -= shown
        else:
            self.marked |= shown
        for path in shown:
            self._refresh_row(path)

    def action_compare(self) -> None:
        """Compare the marked sessions."""
        marked = self.marked_paths()
        if len(marked) < 2:
            self.notify("mark two sessions or more first: Space marks one, a marks all shown",
                        severity="warning", markup=False)
            return
        self.app.push_screen(CompareScreen(self.folder, marked))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        """Replay the session under the cursor (read on a worker)."""
        path = self.current()
        if path is not None:
            self._open(path)

    @work(thread=True, exclusive=True, exit_on_error=False, group="open")
    def _open(self, path: Path) -> None:
        try:
            self.post_message(self.ReplayReady(open_replay(path, self.folder)))
        except SourceError as error:
            self.post_message(self.ReplayReady(None, str(error)))

    def on_sessions_screen_replay_ready(self, message: ReplayReady) -> None:
        """Show the replay over this screen (Esc comes back)."""
        if message.replay is None:
            self.notify(f"{message.error}; choose another session", title="replay",
                        severity="error", markup=False)
            return
        replay = message.replay
        self.app.push_screen(MainScreen(replay.player, replay.profile, self.settings))
        for notice in replay.notices:
            self.notify(notice, severity="warning", timeout=15, markup=False)

    def action_baseline(self) -> None:
        """Make the session under the cursor the folder's baseline, or clear it if it is."""
        path = self.current()
        if path is not None and self._set_baseline(None if path == self.baseline else path):
            self.notify(f"baseline: {path.name}" if self.baseline else "no baseline",
                        markup=False)

    def _set_baseline(self, chosen: Path | None) -> bool:
        """Remember the folder's baseline and tell the main screens showing this folder."""
        state = load_state()
        state.set_baseline(self.folder, chosen)
        try:
            save_state(state)
        except OSError as error:
            self.notify(f"cannot remember the baseline: {error}; check that the config "
                        "folder is writable", severity="error", markup=False)
            return False
        previous, self.baseline = self.baseline, chosen
        for changed in (previous, chosen):
            if changed is not None:
                self._refresh_row(changed)
        for screen in self.app.screen_stack:
            if isinstance(screen, MainScreen) and self._same_folder(screen):
                screen.post_message(BaselineChanged(chosen))
        return True

    def _same_folder(self, screen: MainScreen) -> bool:
        folder = sessions_folder(screen.source)
        return folder is not None and folder.resolve() == self.folder.resolve()

    def action_relabel(self) -> None:
        """Ask for a new label (kept in the file as a meta record)."""
        path = self.current()
        summary = self.summaries.get(path) if path else None
        if path is None or summary is None or summary.error is not None:
            return

        def relabel(label: str | None) -> None:
            if label is not None and label.strip() != summary.label:
                self._relabel(path, label.strip())

        self.app.push_screen(TextDialog("relabel", f"New label for {path.name}:",
                                        summary.label), relabel)

    @work(thread=True, exit_on_error=False, group="relabel")
    def _relabel(self, path: Path, label: str) -> None:
        try:
            append_meta(path, label=label)
        except SessionError as error:
            self.post_message(self.Relabelled(None, str(error)))
            return
        self.post_message(self.Relabelled(summarize(path, profile_dirs(self.folder))))

    def on_sessions_screen_relabelled(self, message: Relabelled) -> None:
        """Show the new label."""
        if message.summary is None:
            self.notify(f"{message.error}; the label is unchanged", title="relabel",
                        severity="error", markup=False)
            return
        self.summaries[message.summary.path] = message.summary
        self._fill()

    def action_delete(self) -> None:
        """Delete the session file under the cursor, after asking."""
        path = self.current()
        if path is None:
            return
        if path in self._recording():
            self.notify(f"{path.name} is being recorded; stop the live session first",
                        severity="warning", markup=False)
            return

        def delete(yes: bool | None) -> None:
            if yes:
                self._delete(path)

        self.app.push_screen(ConfirmDialog("delete", f"Delete {path.name}? The file is "
                                           "removed for good.", yes="Delete"), delete)

    def _delete(self, path: Path) -> None:
        try:
            path.unlink()
            for kept in (index_path(path), path.with_name(path.name + INDEX_PART)):
                kept.unlink(missing_ok=True)  # its index, or what a killed writer noted
        except OSError as error:
            self.notify(f"cannot delete {path.name}: {error.strerror or error}",
                        title="delete", severity="error", markup=False)
            return
        self._forget({path})
        if path == self.baseline:
            self._set_baseline(None)
        self._fill()
        self.notify(f"deleted {path.name}", markup=False)

    def _recording(self) -> set[Path]:
        """Session files live main screens are writing."""
        return {path for screen in self.app.screen_stack if isinstance(screen, MainScreen)
                if (path := session_file(screen.source, screen.status.recording)) is not None
                and screen.source.live}

    def system_commands(self) -> list[SystemCommand]:
        """This screen's commands for the palette."""
        return [
            SystemCommand("sessions: Replay", "replay the session under the cursor",
                          self.action_open),
            SystemCommand("sessions: Compare marked", "the marked sessions side by side",
                          self.action_compare),
            SystemCommand("sessions: Set or clear the baseline",
                          "the phase pane compares each boot with it", self.action_baseline),
            SystemCommand("sessions: Relabel", "change the session's label",
                          self.action_relabel),
            SystemCommand("sessions: Delete", "delete the session file (asks first)",
                          self.action_delete),
            SystemCommand("sessions: Filter", "show only matching sessions", self.action_filter),
        ]
