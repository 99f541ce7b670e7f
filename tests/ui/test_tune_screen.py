"""The tune screen ("Tune this board"): the steps shown as the tune's events arrive, and a short
real tune on the fake board started from the palette, its report written beside its state."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.board_bench import PROFILE, Bench, job_done, open_bench, reached
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from textual.app import App
from textual.command import CommandPalette
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Button, Checkbox, Input, Label, OptionList, Static

from bootlab.control.abrun import BootStarting, LookJudged
from bootlab.core.analysis.goals import Goal
from bootlab.core.board.tuneplan import (
    TuneBaseline,
    TuneRanked,
    TuneState,
    TuneStep,
    TuneStepDone,
    TuneStepStarted,
)
from bootlab.session import events
from bootlab.session.batcher import Post
from bootlab.session.board_jobs import Board, BoardJob, TuneChoice, tune_job
from bootlab.session.events import ABLooked, TuneEnded
from bootlab.ui.launch import live_app
from bootlab.ui.main import board_actions
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.messages import ABProgressed, JobEnded, TuneProgressed, poster
from bootlab.ui.screens.tune_dialog import TuneDialog, parse_choice
from bootlab.ui.screens.tune_screen import TuneScreen


class Harness(App[None]):
    """The tune screen alone."""

    def on_mount(self) -> None:
        self.push_screen(TuneScreen("login"))


def shown(screen: TuneScreen, widget: str) -> str:
    return str(screen.query_one(widget, Static).render())


async def test_steps_show_as_the_events_arrive() -> None:
    app = Harness()
    async with app.run_test(size=(140, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await pilot.pause()
        assert "baseline: measuring" in shown(screen, "#tune-head")
        assert screen.rows() == []
        post = poster(screen)
        post(events.TuneProgressed(TuneBaseline(3, 5.42)))
        post(events.TuneProgressed(TuneRanked([("quiet", "Boot with quiet", 548.0),
                                        ("lpj=4000000", "Preset lpj", 80.0)])))
        quiet = TuneStep("quiet", "Boot with quiet", 548.0, "app-1-1")
        post(events.TuneProgressed(TuneStepStarted(quiet)))
        post(events.ABProgressed(BootStarting(3, 16, "quiet", 2, 8, "boot 3/16: quiet, run 2 of 8"),
                          "kept: login at 5.410 s"))
        await pilot.pause()
        head = shown(screen, "#tune-head")
        assert "baseline: login at 5.420 s (median of 3 boots)" in head
        assert "current best: the board as it is" in head
        assert "next: quiet (548 ms); lpj=4000000 (80 ms)" in head
        assert screen.rows() == [["quiet", "548 ms", "-", "-", "running", ""]]
        assert "boot 3/16: quiet, run 2 of 8 · last: kept: login at 5.410 s" in \
            shown(screen, "#tune-look")
        post(ABLooked(LookJudged(1, 3, ("quiet: look 1 (3 boots each): -540 ms",), True, True)))
        await pilot.pause()
        assert shown(screen, "#tune-look") == "quiet: look 1 (3 boots each): -540 ms"
        done = TuneStep("quiet", "Boot with quiet", 548.0, "app-1-1", "kept",
                        "saves 540 ms [380, 700] after 3 boots a side", 540.0, 380.0, 700.0, 3)
        post(events.TuneProgressed(TuneStepDone(done)))
        harmful = TuneStep("rootfstype=xfs", "Name the root fs", 20.0, "app-1-2", "harmful",
                           "its boots lost root_mounted", None, None, None, 1)
        post(events.TuneProgressed(TuneStepDone(harmful)))
        await pilot.pause()
        assert screen.rows() == [
            ["quiet", "548 ms", "540 ms [380, 700]", "3", "kept",
             "saves 540 ms [380, 700] after 3 boots a side"],
            ["rootfstype=xfs", "20 ms", "-", "1", "harmful", "its boots lost root_mounted"]]
        assert "current best: quiet (measured savings 540 ms, login ≈ 4.880 s)" in \
            shown(screen, "#tune-head")
        assert screen.query_one("#tune-result").has_class("-running")
        post(TuneEnded("nothing predicted is left to try", ("total cut: 540 ms (10%)",),
                       Path("/s/tune-app-1.html")))
        await pilot.pause()
        result = shown(screen, "#tune-result")
        assert not screen.query_one("#tune-result").has_class("-running")
        assert "stopped: nothing predicted is left to try\ntotal cut: 540 ms (10%)" in result
        assert "report: /s/tune-app-1.html (`bootlab report /s/tune-app-1.json`" in result
        assert "next:" not in shown(screen, "#tune-head")


@pytest.fixture
async def bench(pty_pair: Pty, tmp_path: Path) -> Any:
    async with open_bench(pty_pair, tmp_path) as opened:
        yield opened


async def palette(app: App[None], pilot: Pilot[None], command: str) -> None:
    """Run a palette command by its exact title (Ctrl-T p in the live console)."""
    await pilot.press("ctrl+t", "p")
    assert isinstance(app.screen, CommandPalette)
    await pilot.press(*command)
    options = app.screen.query_one(OptionList)
    await wait_until(pilot, lambda: options.option_count > 0, "the palette's hits")
    await pilot.press("down")
    for _ in range(options.option_count):
        highlighted = options.highlighted_option
        assert highlighted is not None
        if str(highlighted.prompt).split("\n")[0].strip() == command:
            break
        await pilot.press("down")
    await pilot.press("enter")


async def test_palette_tunes_the_fake_board_live(bench: Bench,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def short(board: Board, port: str, choice: TuneChoice, post: Post) -> BoardJob:
        return tune_job(board, port, choice, post, baseline_boots=2)

    monkeypatch.setattr(board_actions, "tune_job", short)
    await palette(bench.app, bench.pilot, "board: Tune this board…")
    pilot = bench.pilot
    dialog = bench.app.screen
    assert isinstance(dialog, TuneDialog) and "Boots the board as it is" in \
        str(dialog.query_one("#tune-plan", Static).render())
    dialog.query_one("#tune-boots", Input).value = "2"
    await pilot.click("#start")
    assert "boots per step '2': give a whole number, 3 or more" in \
        str(dialog.query_one("#tune-problem", Label).render())
    dialog.query_one("#tune-boots", Input).value = "3"
    start = dialog.query_one("#start", Button)  # ignores clicks while it shows the last one
    await wait_until(pilot, lambda: not start.has_class("-active"), "the first click's effect")
    await pilot.click("#start")
    await wait_until(pilot, lambda: isinstance(bench.app.screen, TuneScreen), "the tune screen")
    screen = bench.app.screen
    assert isinstance(screen, TuneScreen)
    await wait_until(pilot, lambda: screen.ended is not None, "the tune", 300)
    await job_done(bench)
    progressed = [m.event.event for m in bench.seen if isinstance(m, TuneProgressed)]
    assert isinstance(progressed[0], TuneBaseline) and progressed[0].boots == 2
    started = [e.step.setting for e in progressed if isinstance(e, TuneStepStarted)]
    decided = {e.step.setting: e.step for e in progressed if isinstance(e, TuneStepDone)}
    assert decided["quiet"].outcome == "kept" and decided["quiet"].boots == 3
    assert "quiet" in started and set(started) <= set(decided)
    # the screen shows each step as it was decided
    rows = {row[0]: row for row in screen.rows()}
    assert {setting: row[4] for setting, row in rows.items()} == {
        setting: step.outcome for setting, step in decided.items()}
    assert rows["quiet"][2] == f"{decided['quiet'].saving_ms:.0f} ms [" \
        f"{decided['quiet'].low_ms:.0f}, {decided['quiet'].high_ms:.0f}]"
    assert any(isinstance(m, ABProgressed) for m in bench.seen)
    assert "current best: quiet" in shown(screen, "#tune-head")
    # the result, and the report beside the state
    state = TuneState.load(bench.folder / "tune-app-1.json")
    assert state.finished and state.kept == ["quiet"] and not state.persist
    report = bench.folder / "tune-app-1.html"
    assert "Tune report: app-1" in report.read_text()
    result = shown(screen, "#tune-result")
    assert f"report: {report}" in result and "total cut:" in result
    assert json.loads(state.path.read_text())["env_backup"]
    # Esc goes back to the console; the palette shows the tune again
    await pilot.press("escape")
    assert isinstance(bench.app.screen, MainScreen)
    await palette(bench.app, bench.pilot, "board: Show the tune")
    await wait_until(pilot, lambda: bench.app.screen_stack[-1] is screen,
                     "the tune screen again")


def test_the_dialog_reads_the_same_options_as_bootlab_tune() -> None:
    choice = parse_choice("2.5s", "0.5", "4", "5", "bootdelay=0  quiet", True, False)
    assert choice == TuneChoice(True, 2.5, 0.5, 4, 5, ("bootdelay=0", "quiet"), False)
    assert parse_choice("", "", "", "8", "", False, True) == TuneChoice(keep_going=True)
    for fields, problem in ((("3 seconds", "", "", "8", ""), "budget: effect '3 seconds'"),
                            (("", "soon", "", "8", ""), "time limit 'soon'"),
                            (("", "-1", "", "8", ""), "time limit: must be more than zero"),
                            (("", "", "0", "8", ""), "steps '0'"),
                            (("", "", "", "", ""), "boots per step ''"),
                            (("", "", "", "8", "quiet =3"), "try first:")):
        with pytest.raises(ValueError, match="^" + re.escape(problem)):
            parse_choice(*fields, False, False)


@pytest.mark.board
@pytest.mark.timeout(1200)  # a cold boot, 3 baseline boots and up to 5 a side, loaded hosts
async def test_a_short_tune_from_the_app_on_the_real_board(board_url: str,
                                                           tmp_path: Path) -> None:
    # Measured to the kernel's load: the countdown's 2 s against the start of U-Boot alone,
    # which a loaded host hardly spreads (checking the 34 MB image's hash before `Starting
    # kernel` took 2 to 6 s from boot to boot on one, and the kernel more).
    app, link = live_app(board_url, 115200, PROFILE, tmp_path, label="app",
                         goal=Goal(("kernel_loaded",)))
    seen: list[Message] = []
    async with app.run_test(size=(140, 44), message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: reached(main_screen(app), "login"), "the cold boot",
                         120)
        await palette(app, pilot, "board: Tune this board…")
        dialog = app.screen
        assert isinstance(dialog, TuneDialog)
        for field, value in (("steps", "1"), ("boots", "5"), ("tries", "bootdelay=0")):
            dialog.query_one(f"#tune-{field}", Input).value = value
        dialog.query_one("#tune-persist", Checkbox).value = True   # the countdown is saved
        await pilot.click("#start")
        await wait_until(pilot, lambda: isinstance(app.screen, TuneScreen), "the tune screen")
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await wait_until(pilot, lambda: screen.ended is not None, "the tune", 1100)
        await wait_until(pilot, lambda: any(isinstance(m, JobEnded) for m in seen), "the job")
        assert any(isinstance(m, ABProgressed) for m in seen)
        rows = screen.rows()
        ended = [m.event for m in seen if isinstance(m, JobEnded)]
        assert [row[0] for row in rows] == ["bootdelay=0"] and rows[0][4] == "kept", \
            (rows, screen.ended, ended)
        result = shown(screen, "#tune-result")
        assert "stopped: the limit of 1 steps is reached" in result and "total cut:" in result
    assert link.wait_closed()
    state = TuneState.load(tmp_path / "tune-app-1.json")
    (step,) = state.steps
    assert state.finished and state.kept == ["bootdelay=0"] and state.persist
    assert step.low_ms is not None and step.low_ms > 0 and step.boots <= 5
    assert step.saving_ms is not None and step.saving_ms > 1000     # the 2 s countdown
    assert step.predicted_ms > 1000          # asked for, and recommended with its prediction
    assert state.goal == "kernel_loaded"
    assert state.env_backup["bootdelay"] == "2"
    assert "Tune report: app-1" in (tmp_path / "tune-app-1.html").read_text()
