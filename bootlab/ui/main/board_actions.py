"""The main screen's board keys: reboot now, apply the pending settings and boot, an A/B run of
them, the recommendations, the boot's goal they measure to, a tune; and what the board jobs
report.

`MainScreen` builds on `BoardActions`. An action shows what will be sent (a dialog), then hands
a job to the live port (`LiveLink.submit`); the handlers turn the job's messages into the job
bar, notifications, the settings pane's state and the A/B result screen. In a replay there is
no board: the run keys are off (`check_board_action`), the recommendations still show.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial

from textual import on
from textual.app import SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen

from bootlab.control.abrun import choices_spec
from bootlab.core.advice.recommendation import Recommendation
from bootlab.core.analysis.goals import Goal, several_to_judge
from bootlab.core.analysis.sequential import DEFAULT_EFFECT_S
from bootlab.core.board.abplan import BASE, parse_variant
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.settings import Setting
from bootlab.core.board.tuneplan import state_path
from bootlab.session import events
from bootlab.session.batcher import Source
from bootlab.session.board_jobs import (
    Board,
    BoardJob,
    TuneChoice,
    ab_job,
    apply_job,
    needs_persist,
    reboot_job,
    tune_job,
    tune_name,
)
from bootlab.session.boot_state import BootState
from bootlab.session.events import Outcome, Post
from bootlab.session.live import BoardBusy, LiveLink
from bootlab.session.replay import Player
from bootlab.transports.errors import PortError
from bootlab.ui.messages import (
    ABFinished,
    ABLooked,
    ABProgressed,
    ArgSourceFound,
    EnvRead,
    GoalChanged,
    JobEnded,
    JobNote,
    JobStarted,
    SettingsApplied,
    poster,
)
from bootlab.ui.screens.ab_result import ABResultScreen
from bootlab.ui.screens.advice import AdviceScreen
from bootlab.ui.screens.board_dialogs import ABChoice, ABDialog, ApplyChoice, ApplyDialog
from bootlab.ui.screens.goal_dialog import GoalDialog
from bootlab.ui.screens.tune_dialog import TuneDialog
from bootlab.ui.screens.tune_screen import TuneScreen
from bootlab.ui.widgets.job_bar import JobBar
from bootlab.ui.widgets.settings_panel import SettingsPanel

BOARD_ACTIONS = ("reboot_board", "apply_pending", "ab_pending", "advice", "cancel_job",
                 "set_goal")
"""The actions of this module's keys."""
RUN_ACTIONS = ("reboot_board", "apply_pending", "ab_pending", "set_goal")
"""Actions that drive the board, or say how its boots are measured (a live port only)."""
CTRL_C = b"\x03"
TUNE_SCREEN = "tune"
"""The tune screen's name while it is installed (it outlives Esc while the tune runs)."""
SEVERITY: dict[Outcome, SeverityLevel] = {"done": "information", "failed": "error",
                                          "cancelled": "warning"}


class BoardActions(Screen[None]):
    """Board keys and job reports for the main screen."""

    source: Source
    settings: list[Setting]
    boot_state: BootState

    board_env: dict[str, str] | None = None
    """The U-Boot environment last read from the board (None: not read yet)."""
    arg_source: events.ArgSourceFound | None = None
    """Where the board's kernel arguments come from, once a job found it."""
    kernel_facts: BoardFacts | None = None
    """The facts of the last boot that showed the kernel's command line (a job's prompt
    dialogue since shows none): what board jobs plan from, as `bootlab boot` does."""
    ab_look: str | None = None
    """The running A/B run's last look, in words (until decided)."""

    @property
    def post_event(self) -> Post:
        """Posts a session's events to this screen, as its messages."""
        return poster(self)

    def check_board_action(self, action: str) -> bool | None:
        """Run keys need a live port (off, not hidden, in a replay); cancel needs a job."""
        link = self.source if isinstance(self.source, LiveLink) else None
        if action == "cancel_job":
            return link is not None and link.busy is not None
        if action in RUN_ACTIONS:
            return True if link is not None else None
        return True

    def board_commands(self) -> Iterable[SystemCommand]:
        """The palette's board commands."""
        yield SystemCommand("board: Recommendations", "what to change next, ranked by "
                            "predicted saving; Enter measures one (A)", self.action_advice)
        if not isinstance(self.source, LiveLink):
            return
        yield SystemCommand("board: Reboot now", "reset at U-Boot, reboot -f at a shell, or "
                            "the power command (R)", self.action_reboot_board)
        yield SystemCommand("board: Apply the pending settings and boot", "shows what is sent "
                            "first, then boots and measures (P)", self.action_apply_pending)
        yield SystemCommand("board: A/B run of the pending settings", "against the board as "
                            "it is, N boots each (T)", self.action_ab_pending)
        yield SystemCommand("board: Set the boot's goal…", "a milestone or a pattern a line "
                            "must match; the board keys measure boots to it (G)",
                            self.action_set_goal)
        yield SystemCommand("board: Tune this board…", "rank, A/B-test and keep what proves "
                            "a saving, step by step, to the goal: asks the budget and limits "
                            "first", self.action_tune)
        if self.app.is_screen_installed(TUNE_SCREEN):
            yield SystemCommand("board: Show the tune", "its steps, live, and its result",
                                partial(self.app.push_screen, TUNE_SCREEN))
        if self.source.busy is not None:
            yield SystemCommand("board: Cancel the job", self.source.busy,
                                self.action_cancel_job)

    def with_board_env(self, facts: BoardFacts) -> BoardFacts:
        """What the log shows, with the environment read from the board once there is one."""
        return facts if self.board_env is None else facts.with_env(self.board_env)

    def keys_refused(self, data: bytes, error: BoardBusy) -> None:
        """Typed keys met a running job: Ctrl-C cancels it, anything else is refused."""
        if data == CTRL_C:
            self.action_cancel_job()
        else:
            self.notify(str(error), title="board", severity="warning", markup=False)

    # --- actions ------------------------------------------------------------------------

    def _link(self) -> LiveLink | None:
        if isinstance(self.source, LiveLink):
            return self.source
        self.notify("a replay has no board to drive: start `bootlab PORT` for that",
                    title="board", severity="warning", markup=False)
        return None

    def _board(self, link: LiveLink) -> Board:
        found = self.arg_source
        facts = self.query_one(SettingsPanel).facts
        if facts.kernel_cmdline is None and self.kernel_facts is not None:
            facts = self.kernel_facts.with_env(facts.env)
        return Board(tuple(self.settings), facts,
                     self.boot_state.profile, link.folder, str(link.meta.get("label") or ""),
                     self.boot_state.goal or Goal(),
                     source=None if found is None else found.source,
                     route=None if found is None else found.route, collect=link.collect)

    def _submit(self, link: LiveLink, job: BoardJob) -> None:
        try:
            link.submit(job)
        except (BoardBusy, PortError) as error:
            self.notify(str(error), title="board", severity="warning", markup=False)

    def _idle_link(self) -> LiveLink | None:
        link = self._link()
        if link is not None and link.busy is not None:
            self.notify(f"the board is busy: {link.busy} (Ctrl-T C cancels it)",
                        title="board", severity="warning", markup=False)
            return None
        return link

    def _judges_several(self, goal: Goal, run: str) -> bool:
        """Say so when `run` cannot judge `goal` (each of several goals: `several_to_judge`)."""
        why = several_to_judge(goal, run)
        if why is not None:
            self.notify(why + " (G sets the goal)", title="board", severity="warning",
                        markup=False)
        return why is not None

    def _pending(self) -> dict[str, bool | str]:
        pending = dict(self.query_one(SettingsPanel).pending)
        if not pending:
            self.notify("no setting is pending: mark one in the settings pane first (focus it "
                        "with Tab, then press the setting's key)", title="board",
                        severity="warning", markup=False)
        return pending

    def action_reboot_board(self) -> None:
        """Reboot the board now (reset at U-Boot, reboot -f at a shell, or the power command)."""
        link = self._idle_link()
        if link is not None:
            self._submit(link, reboot_job(self._board(link)))

    def action_apply_pending(self) -> None:
        """Show what applying the pending settings sends; on Send, apply them, boot, measure."""
        link = self._idle_link()
        pending = self._pending() if link is not None else {}
        if link is None or not pending:
            return
        board = self._board(link)

        def send(choice: ApplyChoice | None) -> None:
            if choice is not None:
                self._submit(link, apply_job(board, pending, choice.persist, choice.commands,
                                             self.post_event, choice.from_linux,
                                             choice.collect))

        self.app.push_screen(ApplyDialog(board, pending, needs_persist(self.settings,
                                                                       pending)), send)

    def action_ab_pending(self) -> None:
        """Ask the boots per variant, then A/B the pending settings against the board as is."""
        link = self._idle_link()
        pending = self._pending() if link is not None else {}
        if link is None or not pending:
            return
        name, spec, left_out = choices_spec(self.settings, pending)
        if not spec:
            self.notify("; ".join(left_out) + ": nothing to compare", title="board",
                        severity="warning", markup=False)
            return
        self._ask_ab(link, [(BASE, ""), (name, spec)], needs_persist(self.settings, pending),
                     None, left_out)

    def _ask_ab(self, link: LiveLink, variants: list[tuple[str, str]], persist: bool,
                recommendation: Recommendation | None, notes: Sequence[str] = ()) -> None:
        board = self._board(link)
        if self._judges_several(board.goal, "an A/B run"):
            return

        def start(choice: ABChoice | None) -> None:
            if choice is not None:
                self.ab_look = None
                effect = DEFAULT_EFFECT_S if choice.until_decided else None
                self._submit(link, ab_job(board, variants, choice.boots, choice.persist,
                                          self.post_event, recommendation, effect,
                                          choice.from_linux, choice.collect))

        self.app.push_screen(ABDialog(board, variants, persist, notes), start)

    def action_set_goal(self) -> None:
        """Choose what the boots are measured to: a milestone of the profile, or a pattern."""
        if self._idle_link() is None:
            return

        def chosen(goal: Goal | None) -> None:
            if goal is not None:
                self.post_message(GoalChanged(goal))

        self.app.push_screen(GoalDialog(self.boot_state.own_profile,
                                        self.boot_state.goal or Goal()), chosen)

    def action_tune(self) -> None:
        """Ask the tune's budget and limits (`TuneDialog`), then tune the board to its goal
        (`bootlab tune`), its steps shown live on the tune screen; resumes the app's
        unfinished tune."""
        link = self._idle_link()
        if link is None:
            return
        board = self._board(link)
        if self._judges_several(board.goal, "a tune"):
            return
        unfinished = state_path(board.folder, tune_name(board.folder))

        def chosen(choice: TuneChoice | None) -> None:
            if choice is None or self._idle_link() is not link:
                return
            if self.app.is_screen_installed(TUNE_SCREEN):
                self.app.uninstall_screen(TUNE_SCREEN)
            screen = TuneScreen(board.goal.name)
            self.app.install_screen(screen, TUNE_SCREEN)
            self.app.push_screen(TUNE_SCREEN)
            to_tune = poster(screen)

            def post(event: events.Event) -> None:
                """The tune's steps to its screen; a boot's collected dmesg to the phases."""
                (self.post_event if isinstance(event, events.Collected) else to_tune)(event)

            self._submit(link, tune_job(board, link.name, choice, post))

        self.app.push_screen(TuneDialog(board.goal.name, unfinished.name
                                        if unfinished.exists() else None, board.collect), chosen)

    def action_advice(self) -> None:
        """The recommendations for the current (or last) boot; Enter measures one."""
        if isinstance(self.source, LiveLink):
            paths, folder = self.source.session_paths(), self.source.folder
        elif isinstance(self.source, Player):
            paths, folder = [self.source.path], self.source.path.parent
        else:
            return

        def measure(rec: Recommendation | None) -> None:
            link = self._idle_link() if rec is not None and rec.variant else None
            if rec is not None and rec.variant and link is not None:
                self._ask_ab(link, [(BASE, ""), parse_variant(rec.variant)], rec.persist, rec)

        self.app.push_screen(AdviceScreen(paths, folder, self.boot_state.profile,
                                          isinstance(self.source, LiveLink), self.settings),
                             measure)

    def action_cancel_job(self) -> None:
        """Stop the running board job at its next read."""
        if isinstance(self.source, LiveLink) and self.source.cancel_job():
            self.notify("cancelling the board job", title="board", markup=False)
        else:
            self.notify("no board job is running", title="board", markup=False)

    # --- what the jobs report ------------------------------------------------------------

    def on_job_started(self, message: JobStarted) -> None:
        """A job has the board: the job bar says so."""
        event = message.event
        self.query_one(JobBar).start(event.title)
        self.refresh_bindings()

    def on_job_note(self, message: JobNote) -> None:
        """What the job does now; what it says to the person at the bench is a notification."""
        event = message.event
        self.query_one(JobBar).note(event.text)
        if event.tell:
            self.notify(event.text, title=event.title, timeout=20, markup=False)

    @on(ABProgressed)
    def _ab_progressed(self, message: ABProgressed) -> None:
        """Boot i of N, the variant, the last result."""
        event = message.event
        last = f" · last: {event.last}" if event.last else ""
        look = f" · {self.ab_look}" if self.ab_look else ""
        self.query_one(JobBar).note(event.step.text + last + look)

    @on(ABLooked)
    def _ab_looked(self, message: ABLooked) -> None:
        """An A/B run until decided was judged: the goal's interval, narrowing look by look."""
        event = message.event
        self.ab_look = "; ".join(event.look.lines)
        self.query_one(JobBar).note(self.ab_look)

    def on_job_ended(self, message: JobEnded) -> None:
        """The result, or what went wrong and what to do."""
        event = message.event
        self.query_one(JobBar).stop()
        self.refresh_bindings()
        self.notify(event.text, title=event.title, severity=SEVERITY[event.outcome],
                    timeout=30 if event.outcome == "failed" else 12, markup=False)

    def on_env_read(self, message: EnvRead) -> None:
        """The environment is known: states and previews follow it."""
        event = message.event
        self.board_env = event.env
        panel = self.query_one(SettingsPanel)
        panel.set_facts(panel.facts.with_env(event.env))

    def on_arg_source_found(self, message: ArgSourceFound) -> None:
        """A job found where the kernel's arguments come from: previews show its file edit."""
        self.arg_source = message.event

    def on_settings_applied(self, message: SettingsApplied) -> None:
        """The pending settings were sent: nothing is pending any more."""
        event = message.event
        panel = self.query_one(SettingsPanel)
        panel.clear_pending()
        if event.persist:
            self.board_env = event.env
            panel.set_facts(panel.facts.with_env(event.env))

    @on(ABFinished)
    def _ab_finished(self, message: ABFinished) -> None:
        """Show the A/B result."""
        event = message.event
        self.app.push_screen(ABResultScreen(event.report, event.recommendation,
                                            self.boot_state.profile.order))
