"""The main screen: console, phases, settings and status, fed by one source worker.

The source (a replay or a live port) runs on a worker thread and only posts messages; the
handlers here own all state and push it down to the panes as attributes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.widgets import Input
from textual.worker import get_current_worker

from bootlab.core.analysis.bootlog import read_boot
from bootlab.core.analysis.goals import Goal, goal_meta, stored_goal
from bootlab.core.analysis.profiles import Profile, ProfileError
from bootlab.core.analysis.usermarks import UserMarkError
from bootlab.core.board.evidence import read_evidence
from bootlab.core.board.facts import facts_from_log
from bootlab.core.board.settings import Setting
from bootlab.core.capture.lines import Line
from bootlab.core.capture.text import clean
from bootlab.core.capture.textlog import TextLogError
from bootlab.session import events as session_events
from bootlab.session.batcher import Source
from bootlab.session.boot_state import (
    BootState,
    load_baseline,
    load_budget_file,
    marked_line,
    remember_baseline,
    saved_baseline,
    session_file,
    sessions_folder,
)
from bootlab.session.live import BoardBusy, LiveLink
from bootlab.session.replay import SPEEDS, Player, speed_label
from bootlab.transports.errors import PortError
from bootlab.ui.keys import ESCAPE_ACTIONS, ESCAPE_KEY, escape_key_name
from bootlab.ui.main.board_actions import BOARD_ACTIONS
from bootlab.ui.main.console_keys import ConsoleKeys
from bootlab.ui.main.replay_controls import REPLAY_ACTIONS, REPLAY_BINDINGS, replay_commands, seek
from bootlab.ui.messages import (
    BaselineChanged,
    BaselineLoaded,
    Collected,
    FactsLearned,
    GoalChanged,
    PlaceNote,
    PlaceQuestion,
    PortBack,
    PortLost,
    PortOpened,
    Received,
    RecordingFailed,
    ReplayEnded,
    ReplayRewound,
    SourceFailed,
)
from bootlab.ui.screens.dialogs import ConfirmDialog
from bootlab.ui.screens.goto_dialog import GotoDialog
from bootlab.ui.screens.help import HelpScreen, Section, key_sections
from bootlab.ui.widgets.console import ConsoleView
from bootlab.ui.widgets.job_bar import JobBar
from bootlab.ui.widgets.key_footer import KeyFooter
from bootlab.ui.widgets.note_line import NoteLine
from bootlab.ui.widgets.phase_panel import PhasePanel
from bootlab.ui.widgets.settings_panel import SettingsPanel
from bootlab.ui.widgets.status_line import Status, StatusLine

WIDE = 110
"""From this many columns the phases and settings sit beside the console, not below it."""
TICK_S = 0.25
REPLAY_OFF = frozenset("PRTG")
"""The keys of the board actions a replay has no board for (each says so when pressed)."""
TYPED_ACTIONS = ("search", "next_match", "previous_match", "cycle_time", "toggle_wrap",
                 "toggle_hex", "help", "move_focus",
                 "close_search", "mark_milestone", *BOARD_ACTIONS)
"""Actions on single keys, which the live console sends to the board instead."""


class MainScreen(ConsoleKeys):
    """The bench console (its console keys: `ConsoleKeys`; board keys and job reports:
    `BoardActions`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # first: on a narrow footer the key that lists every other key is never cut off
        Binding("question_mark", "help", "Keys", id="help", tooltip="these keys"),
        # priority: these run before the next key is routed, so keys typed ahead (one write,
        # as over SSH) reach the search bar or the pane the focus moved to
        Binding("slash", "search", "Search", id="search", tooltip="search the log",
                priority=True),
        Binding("tab", "move_focus(1)", "Next pane", id="next-pane", show=False,
                priority=True, tooltip="the next pane (console, phases, settings)"),
        Binding("shift+tab", "move_focus(-1)", "Previous pane", id="previous-pane", show=False,
                priority=True, tooltip="the previous pane"),
        Binding("n", "next_match", "Next", id="next-match", tooltip="next match"),
        Binding("N", "previous_match", "Previous", id="previous-match", show=False,
                tooltip="previous match"),
        Binding("m", "cycle_time", "Time", id="cycle-time",
                tooltip="time column: elapsed, delta, clock, printk"),
        Binding("w", "toggle_wrap", "Wrap", id="toggle-wrap",
                tooltip="wrap long lines onto the rows below, or cut them at the edge "
                        "(Left/Right scroll sideways)"),
        Binding("h", "toggle_hex", "Hex", id="toggle-hex", show=False,
                tooltip="show each line's bytes in hex (CR, NUL, escapes), or its text"),
        Binding("space", "toggle_pause", "Play/pause", id="play-pause",
                tooltip="replay: pause or play"),
        Binding("x", "cycle_speed", "Speed", id="cycle-speed",
                tooltip="replay: 1x, 10x, instant"),
        *REPLAY_BINDINGS,
        Binding("u", "mark_milestone", "Mark", id="mark-milestone",
                tooltip="make the search match (or the newest line) a milestone of your profile"),
        Binding("P", "apply_pending", "Apply+boot", id="apply-pending",
                tooltip="apply the pending settings at the next boot: shows what is sent, "
                        "then boots and measures"),
        Binding("R", "reboot_board", "Reboot", id="reboot-board",
                tooltip="reboot the board now: reset at U-Boot, reboot -f at a shell, or the "
                        "power command"),
        Binding("T", "ab_pending", "A/B", id="ab-pending",
                tooltip="A/B run: the pending settings against the board as it is, N boots each"),
        Binding("A", "advice", "Advice", id="advice",
                tooltip="recommendations ranked by predicted saving; Enter measures one"),
        Binding("C", "cancel_job", "Cancel job", id="cancel-job",
                tooltip="stop the running board job (Ctrl-C in the console does too)"),
        Binding("G", "set_goal", "Goal", id="set-goal", show=False,
                tooltip="the boot's goal the board keys measure to: a milestone, or a pattern "
                        "a line must match"),
        Binding("escape", "close_search", "Close search", id="close-search", show=False,
                tooltip="close the search bar"),
    ]

    def __init__(self, source: Source, profile: Profile, settings: list[Setting]) -> None:
        super().__init__()
        self.source = source
        self.settings = settings
        # A boot is measured to its goal: the one stored with a session, else login.
        goal = stored_goal(source.meta) or Goal()
        self.status = Status(source.name, source.baud,
                             "connecting" if source.live else "playing",
                             board=str(source.meta.get("board") or ""),
                             label=str(source.meta.get("label") or ""),
                             goal=goal.text if goal else "")
        self.boot_state = BootState(profile, goal)
        self._console_view = ConsoleView()
        self._arriving: Line | None = None
        """The line still arriving (the text log gets it at the end)."""
        self._query = ""
        self._escaping = False
        """Ctrl-T was pressed outside the console: the next key is an app command."""

    def compose(self) -> ComposeResult:
        """Console, then phases and settings, the boot's note, the search bar, the status
        line, the keys."""
        with Container(id="body"):
            yield self._console_view
            with Vertical(id="panels"):
                yield PhasePanel()
                yield SettingsPanel(self.settings)
        yield NoteLine(id="collected-note")
        yield Input(placeholder="search the log: Enter finds, Esc closes", id="search")
        yield JobBar()
        yield StatusLine()
        yield KeyFooter()

    def on_mount(self) -> None:
        """Start reading the source and the clock."""
        self.query_one(PhasePanel).border_title = "phases"
        console = self.console
        console.live = self.source.live
        started = self.source.meta.get("started")
        console.epoch_s = float(started) if isinstance(started, int | float) else None
        console.focus()
        if isinstance(self.source, LiveLink):
            console.local_echo = self.source.local_echo
        self.set_interval(TICK_S, self._tick)
        self._read_source()
        self._load_budgets()
        self._load_baseline(saved_baseline(self.source))
        self._tick()

    def on_unmount(self) -> None:
        """Stop the source (a live session is then finished and closed); the text log gets
        the line still arriving and is closed."""
        self.source.stop()
        if isinstance(self.source, LiveLink) and self.source.text_log is not None:
            self._log_lines([self._arriving] if self._arriving is not None else [])
            if self.source.text_log is not None:
                self.source.text_log.close()

    def on_resize(self, event: events.Resize) -> None:
        """Panels beside the console on wide terminals, below it on narrow ones."""
        self.set_class(event.size.width >= WIDE, "-wide")

    @work(thread=True, exit_on_error=False, group="source")
    def _read_source(self) -> None:
        worker = get_current_worker()
        try:
            self.source.run(self.post_event, lambda: worker.is_cancelled)
        except Exception as error:  # a source bug must show as a message, not end the app
            self.post_event(session_events.SourceFailed(f"{self.source.name}: stopped: {error!r}"))

    # --- what the source reports -------------------------------------------------------

    def on_received(self, message: Received) -> None:
        """Lines for the console; the boot for phases, references and settings."""
        event = message.event
        self.console.append(event.lines, event.partial)
        self._log_lines(event.lines)
        self._arriving = event.partial
        if event.session is not None:
            self.status.recording = event.session
        boot_state = self.boot_state
        boot_state.saw(event.lines, event.partial)
        if event.boot is not None:
            session = session_file(self.source, event.session)
            milestones_changed = boot_state.update(event.boot, session.name if session else None)
            self.console.set_references(boot_state.boot_references())
            if milestones_changed:
                self._learn_facts()
        self._tick()
        event.handled = True

    def _log_lines(self, lines: list[Line]) -> None:
        """Copy lines to the text log (`--log`), with the time column as the console shows
        it now; a log that cannot be written is closed and said once (the session goes on)."""
        source = self.source
        if not isinstance(source, LiveLink) or source.text_log is None or not lines:
            return
        console = self.console
        try:
            source.text_log.lines(lines, console.time_mode, console.epoch_s, console.references)
        except TextLogError as error:
            source.text_log = None
            self.notify(str(error), title="log", severity="error", markup=False)

    def _learn_facts(self) -> None:
        boot = self.boot_state.boot
        if boot is not None:
            meta = dict(self.source.meta)
            if self.source.baud is not None:
                meta.setdefault("baud", self.source.baud)
            self._facts_worker([line.raw for line in self.console.lines_since(boot.first_line)],
                               boot.first_line, meta)

    @work(thread=True, exclusive=True, exit_on_error=False, group="facts")
    def _facts_worker(self, raw_lines: list[bytes], first_line: int,
                      meta: dict[str, object]) -> None:
        log = read_boot(raw_lines, self.boot_state.profile, first_line=first_line)
        facts = facts_from_log(log)
        found = read_evidence(self.settings, log, meta)
        if not get_current_worker().is_cancelled:
            self.post_message(FactsLearned(facts, found))

    def on_facts_learned(self, message: FactsLearned) -> None:
        """Settings states, their evidence and the preview follow what the log shows; the
        last boot that showed the kernel's command line is kept for planning board jobs."""
        if message.facts.kernel_cmdline is not None:
            self.kernel_facts = message.facts
        self.query_one(SettingsPanel).set_facts(self.with_board_env(message.facts),
                                                message.found)

    def on_port_opened(self, message: PortOpened) -> None:
        """Connected: the clock column and the status line know the session now."""
        event = message.event
        self.console.epoch_s = event.epoch_s
        self.status.state = "connected"
        self.status.recording = event.session.name
        self._tick()

    def on_source_failed(self, message: SourceFailed) -> None:
        """Say what went wrong and what to do; the app stays open on what was received."""
        event = message.event
        self.status.state = "failed"
        self.notify(event.text, title="port", severity="error", timeout=30, markup=False)
        self._tick()

    def on_recording_failed(self, message: RecordingFailed) -> None:
        """The session cannot be written: say so (and on the status line); the console goes
        on."""
        event = message.event
        self.status.unrecorded = True
        self.notify(event.text, title="session", severity="error", timeout=60, markup=False)
        self._tick()

    def on_port_lost(self, message: PortLost) -> None:
        """The port went away; the reader is reopening it."""
        event = message.event
        self.status.state = "reconnecting"
        self.notify(f"{self.source.name}: lost ({event.reason}); reconnecting. Plug the "
                    "adapter back in or restart the console server.", title="port",
                    severity="warning", markup=False)
        self._tick()

    def on_place_question(self, message: PlaceQuestion) -> None:
        """A labgrid place this user already holds: release it? (No is the default.)"""
        event = message.event
        self.app.push_screen(ConfirmDialog("labgrid place", event.text, yes="Release"),
                             lambda yes: event.answer(bool(yes)))

    def on_place_note(self, message: PlaceNote) -> None:
        """News of the labgrid place (acquired, reconnected, lost), as a notification."""
        event = message.event
        self.notify(event.text, title="place", markup=False)

    def on_port_back(self, message: PortBack) -> None:
        """The port is back."""
        event = message.event
        self.status.state = f"connected (back after {event.gap_s:.1f} s)"
        self._tick()

    def on_collected(self, message: Collected) -> None:
        """A boot's dmesg read after its goal: its milestones join the phase pane, and its
        note (what joined, or why nothing did) shows under the panes."""
        if self.boot_state.collect(message.event):
            self._tick()

    def on_descendant_focus(self, _event: events.DescendantFocus) -> None:
        """The note under the panes is whole while the phase pane has the focus."""
        self._show_note()

    def on_descendant_blur(self, _event: events.DescendantBlur) -> None:
        """... and one line again when it loses it."""
        self._show_note()

    def _show_note(self) -> None:
        self.query_one(NoteLine).show(self.boot_state.collected_note,
                                      self.query_one(PhasePanel).has_focus)

    def on_replay_ended(self, _message: ReplayEnded) -> None:
        """The whole session has been played."""
        self._learn_facts()
        self._tick()

    def _tick(self) -> None:
        """Move the clock on the status line, with the goal's time (against the baseline's)
        once the boot reached it, and what is pending."""
        boot_state = self.boot_state
        self.status.since_reference_s = boot_state.since_reference(self.source.clock_s())
        self.status.goal_s, self.status.goal_vs_base_s = boot_state.goal_time()
        panel = self.query_one(SettingsPanel)
        self.status.pending = tuple(setting.id for setting in self.settings
                                    if setting.id in panel.pending)
        if isinstance(self.source, Player):
            speed = speed_label(self.source.speed)
            self.status.state = f"ended ({speed})" if self.source.ended \
                else f"paused ({speed})" if self.source.paused else f"playing {speed}"
            if self.source.catching_up:
                self.status.state += " · phases here: scanning"
        self.query_one(StatusLine).show(self.status)
        self._show_phases()

    def _show_phases(self) -> None:
        # The last phase lasts until the newest line: it stops growing when the board is
        # quiet (at a login prompt), however long the app stays open.
        boot_state = self.boot_state
        self.query_one(PhasePanel).show(boot_state.rows,
                                        boot_state.since_reference(boot_state.newest_line_s),
                                        boot_state.marks(self.source.clock_s()),
                                        boot_state.unit_rows)
        self._show_note()

    # --- the phase pane's baseline, budgets and user milestones --------------------------

    def _load_budgets(self) -> None:
        self.boot_state.budgets, problem = load_budget_file(self.boot_state.profile)
        if problem:
            self.notify(problem, title="budgets", severity="error", timeout=30, markup=False)

    @work(thread=True, exclusive=True, exit_on_error=False, group="baseline")
    def _load_baseline(self, session: Path | None) -> None:
        self.post_event(load_baseline(session, self.boot_state.profile))

    def on_baseline_changed(self, message: BaselineChanged) -> None:
        """Another baseline was chosen (or it was cleared): load it."""
        self._load_baseline(message.session)

    def on_baseline_loaded(self, message: BaselineLoaded) -> None:
        """Compare each milestone with the baseline's."""
        event = message.event
        self.boot_state.baseline = event
        if event.problem:
            self.notify(event.problem, title="baseline", severity="warning", markup=False)
        self._tick()

    def on_goal_changed(self, message: GoalChanged) -> None:
        """Measure to the new goal: the phase pane, the status line, the live port's capture
        and sessions, the board jobs; the baseline is analysed again with its milestone."""
        boot_state = self.boot_state
        boot_state.set_goal(message.goal)
        if isinstance(self.source, LiveLink):
            self.source.set_goal(goal_meta(message.goal), boot_state.profile)
        self.status.goal = message.goal.text
        baseline = boot_state.baseline
        if baseline is not None and baseline.session is not None:
            self._load_baseline(baseline.session)
        self.notify(f"boots are measured to {message.goal.name} from now on", title="goal",
                    markup=False)
        self._tick()

    def _choose_baseline(self, session: Path | None) -> None:
        try:
            remember_baseline(self.source, session)
        except OSError as error:
            self.notify(f"the baseline cannot be remembered: {error}", title="baseline",
                        severity="warning", markup=False)
        self.post_message(BaselineChanged(session))

    def action_mark_milestone(self) -> None:
        """Make the search match, else the newest line, a milestone of the user's profile."""
        console, boot = self.console, self.boot_state.boot
        line = marked_line(console.lines, console.match_row)
        try:
            if line is None:
                raise UserMarkError("no line to mark yet")
            mark = self.boot_state.mark(line, console.lines_since(boot.first_line if boot else 1),
                                      sessions_folder(self.source))
        except (UserMarkError, ProfileError, OSError) as error:
            self.notify(str(error), title="milestone", severity="error", markup=False)
            return
        self.notify(f"{mark.marker.id} (line {line.number}) added to {mark.path}",
                    title="milestone", markup=False)
        self._tick()

    # --- keys ---------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """Outside the console and the search bar: Ctrl-T and a key run that app command, as
        in the console (so `Ctrl-T q` quits from any pane); else a setting's key marks it
        pending, and says so."""
        if isinstance(self.source, Player) and not isinstance(self.focused, Input) \
                and event.character in REPLAY_OFF:
            event.stop()
            self.notify(f"{event.character}: a replay has no board to drive; the board keys "
                        "work live (`bootlab PORT`)", title="board", severity="warning",
                        markup=False)
            return
        if isinstance(self.focused, ConsoleView | Input):
            return
        if self._escaping or event.key == ESCAPE_KEY:
            event.stop()
            event.prevent_default()
            self._escaping = not self._escaping
            if not self._escaping:
                name = escape_key_name(event.key, event.character)
                action = ESCAPE_ACTIONS.get(name)
                self.post_message(ConsoleView.Escaped(name, action[0] if action else None))
            return
        panel = self.query_one(SettingsPanel)
        setting = panel.key_setting(event.character)
        if setting is not None:
            event.stop()
            panel.toggle(setting)
            if setting.id in panel.pending:
                self.notify(f"{setting.title}: pending. Nothing is sent until P (apply and "
                            "boot) or T (A/B run); the same key unmarks it", title="settings",
                            markup=False)
            self._tick()

    @on(ConsoleView.Typed)
    def _send(self, message: ConsoleView.Typed) -> None:
        if not isinstance(self.source, LiveLink):
            return
        partial = self.console.partial
        shown = "" if partial is None else clean(partial.raw)
        secret = self.source.secrets.typed(shown, message.data)
        try:
            self.source.send(message.data, secret)
        except BoardBusy as error:
            self.keys_refused(message.data, error)
        except PortError as error:
            self.notify(str(error), title="port", severity="warning", markup=False)
        else:
            self.console.echo(message.data, secret)

    @on(ConsoleView.Escaped)
    async def _escaped(self, message: ConsoleView.Escaped) -> None:
        action = message.action
        if action is None:
            self.notify(f"Ctrl-T {message.key} means nothing; Ctrl-T ? lists the keys",
                        severity="warning", markup=False)
        elif action.startswith("app."):
            await self.app.run_action(action)
        else:
            # Called directly: check_action turns these keys off while typing to the board.
            getattr(self, f"action_{action}")()

    @on(PhasePanel.Chosen)
    def _show_line(self, message: PhasePanel.Chosen) -> None:
        console = self.console
        row = console.row_of(message.line)
        if row is not None:
            console.scroll_to_row(row)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Play/pause and speed only exist in a replay; the single keys do nothing (and are
        not shown) while they are typed to the board."""
        if action in ("toggle_pause", "cycle_speed", *REPLAY_ACTIONS):
            return isinstance(self.source, Player) and not isinstance(self.focused, Input)
        if action in BOARD_ACTIONS and self.check_board_action(action) is not True:
            return self.check_board_action(action)
        focused = self.focused
        if action == "search" and isinstance(focused, Input):
            return False                   # "/" typed into the search bar is text
        return not (action in TYPED_ACTIONS and isinstance(focused, ConsoleView)
                    and focused.live)

    def system_commands(self) -> Iterable[SystemCommand]:
        """This screen's commands for the palette, by area."""
        yield SystemCommand("console: Cycle the time column",
                            "elapsed, delta to the previous line, wall clock, printk time",
                            self.action_cycle_time)
        yield SystemCommand("console: Search", "find text in the log (n / N: next, previous)",
                            self.action_search)
        yield SystemCommand("console: Wrap long lines", "on the rows below, or cut at the "
                            "edge (Left/Right scroll sideways)", self.action_toggle_wrap)
        yield SystemCommand("console: Hex view", "each line's bytes in hex (a CR, a NUL, an "
                            "escape), or its text again", self.action_toggle_hex)
        if isinstance(self.source, LiveLink):
            yield SystemCommand("console: Local echo", "show what you type (for a board that "
                                "does not echo); Ctrl-T l", self.action_toggle_echo)
            yield SystemCommand("console: Send BREAK", "the line held low for 0.25 s (SysRq, "
                                "bootloaders that want one); Ctrl-T b", self.action_send_break)
        yield SystemCommand("console: Follow new lines", "scroll to the end and stay there",
                            self.action_follow)
        yield SystemCommand("help: Keys", "every key, by where it works", self.action_help)
        yield from self.board_commands()
        yield SystemCommand("phases: Mark the line as a milestone",
                            "the search match, else the newest line, joins your profile",
                            self.action_mark_milestone)
        session = session_file(self.source, self.status.recording)
        if session is not None:
            yield SystemCommand("phases: Use this boot as the baseline", session.name,
                                lambda: self._choose_baseline(session))
        if self.boot_state.baseline is not None and self.boot_state.baseline.session is not None:
            yield SystemCommand("phases: Clear the baseline", "compare with nothing",
                                lambda: self._choose_baseline(None))
        if self.check_action("toggle_pause", ()):
            yield SystemCommand("replay: Play or pause", "pause or resume the replay",
                                self.action_toggle_pause)
            yield SystemCommand("replay: Change speed", "1x, 10x, instant",
                                self.action_cycle_speed)
            yield from replay_commands(self.action_replay_seek)

    def action_toggle_pause(self) -> None:
        """Pause or resume the replay; at its end, play it again from the start."""
        if isinstance(self.source, Player):
            if self.source.ended:
                self.source.set_paused(False)
                self.source.seek_to(0.0)
            else:
                self.source.set_paused(not self.source.paused)
            self._tick()

    def action_cycle_speed(self) -> None:
        """Replay at 1x, 10x, or at once."""
        if isinstance(self.source, Player):
            speed = SPEEDS[(SPEEDS.index(self.source.speed) + 1) % len(SPEEDS)] \
                if self.source.speed in SPEEDS else SPEEDS[0]
            self.source.set_speed(speed)
            self._tick()

    def action_replay_seek(self, how: str) -> None:
        """Replay: seek (`back`, `forward`, `start`, `next`, `previous`: see replay_controls;
        `to`: a moment typed in a dialog)."""
        player = self.source
        if not isinstance(player, Player):
            return
        if how == "to":
            def go(moment: float | None) -> None:
                if moment is not None:
                    player.seek_to(moment)
                    self._tick()

            self.app.push_screen(GotoDialog(player.clock_s(), player.duration_s), go)
            return
        seek(player, how)
        self._tick()

    def on_replay_rewound(self, _message: ReplayRewound) -> None:
        """A seek went back: the replay plays again from the start, so do the panes."""
        self.console.clear()
        self.boot_state.restart()
        self.status.state = ""
        self._tick()

    def action_move_focus(self, step: int) -> None:
        """Tab, Shift-Tab: the next or previous pane, at once."""
        if step > 0:
            self.focus_next()
        else:
            self.focus_previous()

    def action_palette(self) -> None:
        """Open the command palette (Ctrl-T p: Ctrl-P itself goes to the board)."""
        self.app.action_command_palette()

    def action_help(self) -> None:
        """Show every key."""
        self.app.push_screen(HelpScreen(self.key_sections()))

    def key_sections(self) -> list[Section]:
        """Every key, by where it works (for the help screen)."""
        bindings = [(self.app.get_key_display(b), b.tooltip or b.description)
                    for b in self.BINDINGS if isinstance(b, Binding)]
        return key_sections(bindings, [(s.key, s.title) for s in self.settings])
