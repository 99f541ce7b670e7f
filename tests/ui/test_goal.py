"""The boot's goal in the app: `bootlab PORT --pattern` on a real pty shows it on the status line
and marks its row in the phase pane; the goal dialog (palette, or Ctrl-T G) changes it, and the
board jobs then measure to it and store it; a replay shows a session's stored goal."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.board_bench import Bench, job_done, mark, open_bench, reached
from support.lab3_log import lab3_session
from support.paths import example_sessions
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from test_ready import GOAL as READY_GOAL
from test_ready import JOURNAL as JOURNAL_GOAL
from test_ready import journal_session, ready_session, run
from textual.command import CommandPalette
from textual.notifications import Notify
from textual.widgets import Checkbox, Input, Label, OptionList

from bootlab.commands.common import goal_of
from bootlab.commands.parsers import build_console_parser
from bootlab.core.analysis.goals import GOAL_ID, Goal, goal_meta, session_profile
from bootlab.core.analysis.loading import load
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import append_meta, load_session
from bootlab.core.capture.sources import open_source
from bootlab.exitcodes import BAD_INPUT
from bootlab.ui.launch import replay_app, run_live
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.screens.goal_dialog import GoalDialog
from bootlab.ui.widgets.note_line import NoteLine
from bootlab.ui.widgets.phase_panel import GOAL_MARK, PhasePanel
from bootlab.ui.widgets.status_line import StatusLine

PROFILE = load_profile("linux")
PATTERN = r"S10hello: example service \w+"
APP_GOAL = {"until": [GOAL_ID], "pattern": PATTERN}


def status_text(screen: MainScreen) -> str:
    return str(screen.query_one(StatusLine).render())


def goal_time_shown(screen: MainScreen, name: str) -> bool:
    """The status line carries the goal reached, with its time (`login 0.81 s`)."""
    return re.search(rf"(?<![\w/]){re.escape(name)} \d+\.\d\d s", status_text(screen)) is not None


def marked_rows(screen: MainScreen) -> list[str]:
    """The phase pane's rows shown as the goal (their milestone cell)."""
    panel = screen.query_one(PhasePanel)
    cells = [panel.get_cell(key, "milestone") for key in panel.rows]
    return [cell.plain for cell in cells if cell.plain.endswith(GOAL_MARK)]


async def test_the_pattern_given_to_the_app_is_the_goal_shown(pty_pair: Pty,
                                                              tmp_path: Path) -> None:
    args = build_console_parser().parse_args([pty_pair.name, "--pattern", PATTERN])
    async with open_bench(pty_pair, tmp_path, goal_of(args, PROFILE)) as bench:
        screen = bench.screen
        assert reached(screen, GOAL_ID)
        rows = [row.milestone.id for row in screen.boot_state.rows]
        assert rows.index("init") < rows.index(GOAL_ID) < rows.index("login")
        await bench.pilot.pause()
        assert goal_time_shown(screen, f"/{PATTERN}/")
        assert marked_rows(screen) == [f"{GOAL_ID} {GOAL_MARK}"]
    (first,) = bench.sessions()
    assert first.meta["goal"] == APP_GOAL


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--pattern", "(a+)+", "repetition inside a repetition"),
    ("--until", "nope", "no milestone 'nope' in profile linux"),
])
def test_a_bad_goal_stops_the_app_before_it_starts(tmp_path: Path, option: str, value: str,
                                                   says: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    args = build_console_parser().parse_args(["/dev/ttyUSB7", option, value,
                                              "--sessions", str(tmp_path)])
    assert run_live(args) == BAD_INPUT
    assert says in capsys.readouterr().err


async def choose_goal(bench: Bench) -> GoalDialog:
    """Open the goal dialog from the command palette (Ctrl-T p in the live console)."""
    pilot = bench.pilot
    await pilot.press("ctrl+t", "p")
    assert isinstance(bench.app.screen, CommandPalette)
    await pilot.press(*"goal")
    await wait_until(pilot, lambda: bench.app.screen.query_one(OptionList).option_count > 0,
                     "the palette's hits")
    await pilot.press("down", "enter")
    await wait_until(pilot, lambda: isinstance(bench.app.screen, GoalDialog), "the dialog")
    dialog = bench.app.screen
    assert isinstance(dialog, GoalDialog)
    return dialog


async def test_the_palette_dialog_changes_the_goal_the_board_jobs_measure_to(
        pty_pair: Pty, tmp_path: Path) -> None:
    async with open_bench(pty_pair, tmp_path) as bench:
        screen, pilot = bench.screen, bench.pilot
        await pilot.pause()
        assert goal_time_shown(screen, "login") and marked_rows(screen) == [
            f"login {GOAL_MARK}"]
        # A milestone from the profile's list.
        dialog = await choose_goal(bench)
        options = dialog.query_one(OptionList)
        assert options.has_focus and options.highlighted is not None
        assert options.get_option_at_index(options.highlighted).id == "login"
        options.highlighted = [m.id for m in PROFILE.markers].index("init")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.status.goal == "init", "the goal init")
        assert isinstance(bench.app.screen, MainScreen)
        await pilot.pause()
        assert goal_time_shown(screen, "init") and marked_rows(screen) == [
            f"init {GOAL_MARK}"]
        # A pattern (the dialog by its key this time): a bad one is refused, a good one taken.
        await pilot.press("ctrl+t", "G")
        dialog = bench.app.screen
        assert isinstance(dialog, GoalDialog)
        await pilot.press("tab", "(", "enter")
        problem = dialog.query_one("#goal-problem", Label)
        assert "bad goal pattern '('" in str(problem.render())
        assert bench.app.screen is dialog
        dialog.query_one(Input).value = PATTERN
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.status.goal == f"/{PATTERN}/", "the pattern")
        assert bench.link.meta["goal"] == APP_GOAL
        # R: the new boot is recorded and measured to the goal.
        await pilot.press("ctrl+t", "R")
        ended = await job_done(bench)
        assert ended.text.endswith(f"to goal '{PATTERN}'")
        await wait_until(pilot, lambda: bench.board.boots == 2 and reached(screen, GOAL_ID),
                         "the goal in the new boot", 20)
        await pilot.pause()
        assert marked_rows(screen) == [f"{GOAL_ID} {GOAL_MARK}"]
        await wait_until(pilot, lambda: reached(screen, "login"), "login", 20)
        # P: apply quiet and boot, measured to the goal.
        bench.seen.clear()
        await mark(bench, "q")
        await pilot.press("P", "enter")
        ended = await job_done(bench)
        assert ended.text.startswith(f"booted: goal '{PATTERN}' ") and \
            "after the boot command" in ended.text
    first, *_ = bench.sessions()
    assert first.meta["goal"] == APP_GOAL            # changed while it was open: a meta record
    boots = bench.sessions("boot")
    assert len(boots) == 2 and all(s.meta["goal"] == APP_GOAL for s in boots)
    source = open_source(boots[-1].path)                 # P's measured boot, analysed again
    ids = [m.id for m in analyze(source.data, session_profile(PROFILE, source.meta),
                                 source.line_time).milestones]
    assert GOAL_ID in ids and "linux" not in ids         # quiet


async def test_a_replay_shows_the_stored_goal(tmp_path: Path) -> None:
    path = tmp_path / example_sessions("default")[0].name
    shutil.copy(example_sessions("default")[0], path)
    append_meta(path, goal=goal_meta(Goal((GOAL_ID,), PATTERN)))
    app = replay_app(path, speed=0.0)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the replay end")
        await pilot.pause()
        assert goal_time_shown(screen, f"/{PATTERN}/")
        assert marked_rows(screen) == [f"{GOAL_ID} {GOAL_MARK}"]


async def test_a_replay_of_a_session_without_a_goal_is_measured_to_login() -> None:
    app = replay_app(example_sessions("default")[0], speed=0.0)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the replay end")
        await pilot.pause()
        assert goal_time_shown(screen, "login") and marked_rows(screen) == [f"login {GOAL_MARK}"]
        assert load_session(example_sessions("default")[0]).meta.get("goal") is None


async def submit(bench: Bench, field: str, value: str) -> GoalDialog:
    """In the goal dialog (opened when it is not), type `value` into `field`, press Enter."""
    if not isinstance(bench.app.screen, GoalDialog):
        await bench.pilot.press("ctrl+t", "G")
    dialog = bench.app.screen
    assert isinstance(dialog, GoalDialog)
    box = dialog.query_one(field, Input)
    box.focus()
    box.value = value
    await bench.pilot.press("enter")
    return dialog


async def test_a_goal_chosen_as_well_makes_the_boot_wait_for_each(pty_pair: Pty,
                                                                   tmp_path: Path) -> None:
    """"As well": the application's line joins login, and the boot is measured to the last
    of them; an A/B run, judging one time, is refused and says why."""
    async with open_bench(pty_pair, tmp_path) as bench:
        screen, pilot = bench.screen, bench.pilot
        await pilot.press("ctrl+t", "G")
        dialog = bench.app.screen
        assert isinstance(dialog, GoalDialog)
        also = dialog.query_one("#goal-also", Checkbox)
        assert not also.value and "as well as login" in str(also.label)
        also.value = True
        await submit(bench, "#goal-pattern", PATTERN)
        both = f"login and /{PATTERN}/"
        await wait_until(pilot, lambda: screen.status.goal == both, "both goals")
        assert bench.link.meta["goal"] == {"until": ["login", GOAL_ID], "pattern": PATTERN,
                                           "all": True}
        await pilot.press("ctrl+t", "R")
        ended = await job_done(bench)
        assert ended.text.endswith(f"to login and goal '{PATTERN}'")
        await wait_until(pilot, lambda: bench.board.boots == 2 and reached(screen, GOAL_ID)
                         and reached(screen, "login"), "both in the new boot", 20)
        rows = {row.milestone.id: row.elapsed_s for row in screen.boot_state.rows}
        assert rows[GOAL_ID] is not None and rows["login"] is not None
        assert screen.boot_state.goal_time()[0] == rows["login"]        # the last of them
        await wait_until(pilot, lambda: sorted(marked_rows(screen)) == [
            f"{GOAL_ID} {GOAL_MARK}", f"login {GOAL_MARK}"], "both rows marked as the goal")
        await pilot.press("ctrl+t", "tab", "q", "T")                    # an A/B: refused
        await wait_until(pilot, lambda: any(
            isinstance(m, Notify) and "an A/B run judges one goal's time" in
            m.notification.message for m in bench.seen), "the refusal")
        assert isinstance(bench.app.screen, MainScreen) and bench.link.busy is None
        measured = bench.sessions("boot")[-1]                           # flushed at the end
        assert measured.meta["goal"]["all"] and b"login:" in measured.data   # of the job
        # Unchecked, a choice replaces the goal again.
        await pilot.press("ctrl+t", "G")
        dialog = bench.app.screen
        assert isinstance(dialog, GoalDialog)
        assert dialog.query_one("#goal-also", Checkbox).value
        dialog.query_one("#goal-also", Checkbox).value = False
        await submit(bench, "#goal-unit", "multi-user.target")
        await wait_until(pilot, lambda: screen.status.goal == "unit:multi-user.target",
                         "one goal again")


def problem(dialog: GoalDialog) -> str:
    return str(dialog.query_one("#goal-problem", Label).render())


async def test_a_unit_chosen_in_the_dialog_is_the_goal(pty_pair: Pty, tmp_path: Path) -> None:
    async with open_bench(pty_pair, tmp_path) as bench:
        screen, pilot = bench.screen, bench.pilot
        dialog = await submit(bench, "#goal-unit", "multi user")   # not a unit's name
        assert "not a systemd unit's name" in problem(dialog)
        await submit(bench, "#goal-unit", "multi-user.target")
        await wait_until(pilot, lambda: screen.status.goal == "unit:multi-user.target",
                         "the unit goal")
        assert bench.link.meta["goal"] == {"until": ["unit:multi-user.target"]}
        assert "goal: unit:multi-user.target" in status_text(screen)


async def test_a_command_or_a_journal_message_chosen_in_the_dialog_is_the_goal(
        pty_pair: Pty, tmp_path: Path) -> None:
    async with open_bench(pty_pair, tmp_path) as bench:
        screen, pilot = bench.screen, bench.pilot
        dialog = await submit(bench, "#goal-ready", "  ")           # no command: refused
        assert "a ready: goal needs the command" in problem(dialog)
        await submit(bench, "#goal-ready", "systemctl is-active myapp")
        await wait_until(pilot, lambda: screen.status.goal == "ready:systemctl is-active myapp",
                         "the ready goal")
        assert bench.link.meta["goal"] == {"until": ["ready:systemctl is-active myapp"]}
        dialog = await submit(bench, "#goal-journal", "Started (myapp")
        assert "bad journal: goal pattern" in problem(dialog)
        await submit(bench, "#goal-journal", "Started myapp")
        await wait_until(pilot, lambda: screen.status.goal == "journal:Started myapp",
                         "the journal goal")


@pytest.mark.parametrize(("kind", "goal", "shown"), [
    ("ready", READY_GOAL, "ready:sys"), ("journal", JOURNAL_GOAL, "journal:S")])
async def test_a_replay_measured_to_a_goal_asked_after_login_shows_it_reached(
        tmp_path: Path, kind: str, goal: str, shown: str) -> None:
    """The answer after login joins the pane once playback passes it: the goal's row (its
    bound in its name, cut to its column), the status line's time, the note saying how it
    was placed."""
    path = ready_session(tmp_path, first=run(3500, 3520, 3), failed=run(8000, 8020, 3),
                         ok=run(8070, 8100, 0)) if kind == "ready" else journal_session(tmp_path)
    boot = load(path).analysis.boots[-1]
    app = replay_app(path, speed=0.0)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.query_one(NoteLine).note is not None, "the note")
        assert screen.query_one(NoteLine).note == boot.ready
        await wait_until(pilot, lambda: bool(marked_rows(screen)), "the goal's row")
        (row,) = marked_rows(screen)
        assert row.startswith(shown) and row.endswith(GOAL_MARK)
        assert goal_time_shown(screen, goal)


async def test_a_replay_measured_to_a_unit_shows_it_reached(tmp_path: Path) -> None:
    path = lab3_session(tmp_path)
    append_meta(path, goal=goal_meta(Goal(("unit:multi-user.target",))))
    app = replay_app(path, speed=0.0)
    async with app.run_test(size=(130, 40)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the replay end")
        await pilot.pause()
        assert goal_time_shown(screen, "unit:multi-user.target")
        # the pane cuts a long id to its column (`unit:multi-user.t… ◎`), the mark stays
        (row,) = marked_rows(screen)
        assert row.startswith("unit:multi-user") and row.endswith(GOAL_MARK)
