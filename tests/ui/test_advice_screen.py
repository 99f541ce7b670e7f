"""The recommendations screen: ranked advice quoting its lines, Enter measures one with an A/B
run (live), the measured difference beside the prediction (also for `bootlab advise --ab`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.text import Text
from support.board_bench import Bench, job_done, open_bench, rendered
from support.paths import example_sessions
from support.pilot import wait_until
from support.pty_pair import Pty
from textual.widgets import OptionList, Static

from bootlab.cli import main
from bootlab.core.board.abplan import ABState
from bootlab.ui.launch import replay_app
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.messages import ABFinished
from bootlab.ui.screens.ab_result import ABResultScreen
from bootlab.ui.screens.advice import AdviceScreen
from bootlab.ui.screens.board_dialogs import ABDialog


@pytest.fixture
async def bench(pty_pair: Pty, tmp_path: Path) -> AsyncIterator[Bench]:
    async with open_bench(pty_pair, tmp_path) as opened:
        yield opened


def option_texts(screen: AdviceScreen) -> list[str]:
    options = screen.query_one(OptionList)
    prompts = [options.get_option_at_index(i).prompt for i in range(options.option_count)]
    return [rendered(prompt) for prompt in prompts if isinstance(prompt, Text)]


async def open_advice(bench: Bench) -> AdviceScreen:
    await bench.pilot.press("ctrl+t", "A")
    screen = bench.app.screen
    assert isinstance(screen, AdviceScreen)
    await wait_until(bench.pilot, lambda: screen.recommendations, "the recommendations")
    return screen


async def test_measuring_a_recommendation_puts_the_result_beside_it(
        bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    pilot = bench.pilot
    advice = await open_advice(bench)
    ids = [rec.id for rec in advice.recommendations]
    predicted = [rec.predicted_ms for rec in advice.recommendations]
    assert predicted == sorted(predicted, reverse=True) and "bootdelay" in ids
    countdown = advice.recommendations[ids.index("bootdelay")]
    text = option_texts(advice)[ids.index("bootdelay")]
    assert "Autoboot countdown" in text and "Hit any key to stop autoboot" in text
    assert "Enter: A/B run base: against bootdelay0:bootdelay=0, settings saved" in text
    await pilot.press(*["down"] * ids.index("bootdelay"), "enter")
    dialog = bench.app.screen
    assert isinstance(dialog, ABDialog) and dialog.persist
    assert dialog.variants == [("base", ""), ("bootdelay0", "bootdelay=0")]
    await pilot.press("backspace", "backspace", "2", "enter")    # until decided, 2 at most
    await wait_until(pilot, lambda: any(isinstance(m, ABFinished) for m in bench.seen),
                     "the A/B run", 120)
    await job_done(bench)
    result = bench.app.screen
    assert isinstance(result, ABResultScreen)
    shown = rendered(result.result)
    assert f"predicted: Autoboot countdown saves {countdown.predicted_ms:.0f} ms" in shown
    assert "measured:  bootdelay0: " in shown and "2+2 boots" in shown
    # The environment is saved where a boot needs it changed (the countdown shows: each is
    # reset), and put back after the last: as many saves as changes in the boots' order.
    (state,) = [ABState.load(p) for p in bench.folder.glob("ab-*.json")]
    order = [variant for variant, _ in state.done]
    changes = sum(a != b for a, b in zip(["base", *order], order, strict=False))
    assert bench.board.commands.count("saveenv") == changes + (order[-1] != "base")
    assert bench.board.saved["bootdelay"] == "2"
    await pilot.press("escape")
    assert isinstance(bench.app.screen, MainScreen)
    advice = await open_advice(bench)
    again = option_texts(advice)[[r.id for r in advice.recommendations].index("bootdelay")]
    assert "A/B bootdelay0-1: bootdelay0: " in again and "measured" in again
    # The command line shows the same measurement beside its prediction.
    session = next(p for p in sorted(bench.folder.glob("*-bench-*.jsonl")))
    assert main(["advise", str(session), "--ab", str(bench.folder)]) == 0
    out = capsys.readouterr().out
    assert "A/B bootdelay0-1: bootdelay0: " in out and "predicted" in out


async def test_a_replay_lists_recommendations_with_the_run_key_off() -> None:
    app = replay_app(example_sessions("default")[0], speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("A")
        screen = app.screen
        assert isinstance(screen, AdviceScreen)
        await wait_until(pilot, lambda: screen.recommendations, "the recommendations")
        texts = option_texts(screen)
        assert any("Autoboot countdown" in t and "line " in t for t in texts)
        assert all("Enter: A/B run" not in t for t in texts)
        assert "Enter is off" in str(screen.query_one("#advice-head", Static).content)
        assert screen.check_action("measure", ()) is None
        await pilot.press("enter")
        assert app.screen is screen                    # nothing started
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
