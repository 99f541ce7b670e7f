"""Replay controls: seek a few seconds, to the start, to the next or previous milestone; the
console and the phase pane then show exactly what they showed live at that moment."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import example_sessions
from support.pilot import main_screen, wait_until
from textual.pilot import Pilot
from textual.widgets import Input, Label

from bootlab.core.analysis.pipeline import Capture
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture import sources
from bootlab.core.capture.session import load_session
from bootlab.session import replay as replay_module
from bootlab.session.replay import SEEK_STEP_S, Player, milestone_arrivals
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import live_app, replay_app
from bootlab.ui.main.replay_controls import parse_moment, seek
from bootlab.ui.screens.goto_dialog import GotoDialog
from bootlab.ui.widgets.phase_panel import GOAL_MARK, PhasePanel

DEFAULT = example_sessions("default")[0]
CHUNKS = load_session(DEFAULT).chunks
LINUX = load_profile("linux")


def played_until(t_s: float) -> tuple[int, list[str]]:
    """Lines completed and milestones reached when a live capture had got to `t_s`."""
    capture = Capture(LINUX)
    lines = 0
    for t_ns, data in CHUNKS:
        if t_ns / 1e9 > t_s:
            break
        lines += len(capture.feed(data, t_ns).lines)
    boots = capture.boots
    return lines, [m.id for m in boots[-1].milestones] if boots else []


def player(app: BootlabApp) -> Player:
    source = main_screen(app).source
    assert isinstance(source, Player)
    return source


def shown(app: BootlabApp) -> tuple[int, list[str]]:
    """Console lines and phase rows the main screen shows now."""
    screen = main_screen(app)
    screen.console.flush()
    table = screen.query_one(PhasePanel)
    names = [table.get_row_at(i)[0].plain.removesuffix(f" {GOAL_MARK}").rstrip("*")
             for i in range(table.row_count)]
    return screen.console.line_count, names


async def all_shown(app: BootlabApp, pilot: Pilot[None]) -> tuple[int, list[str]]:
    """What the panes show once the whole replay is drawn: the end's state can arrive before
    the last lines do, so wait for the goal's row and for two looks that agree."""
    looks: list[tuple[int, list[str]]] = []

    def drawn() -> bool:
        looks.append(shown(app))
        return "login" in looks[-1][1] and looks[-2:] == [looks[-1]] * 2
    await wait_until(pilot, drawn, "the whole replay drawn")
    return looks[-1]


async def settle_at(app: BootlabApp, pilot: Pilot[None], t_s: float) -> None:
    """Wait until the paused replay sits at `t_s` with the panes showing it."""
    expected = played_until(t_s)
    await wait_until(pilot, lambda: abs(player(app).clock_s() - t_s) < 1e-6
                     and shown(app) == expected, f"the panes at {t_s} s")


async def paused_app(pilot: Pilot[None], app: BootlabApp) -> Player:
    await pilot.press("space")
    assert player(app).paused
    return player(app)


async def test_seek_keys_move_by_a_few_seconds_and_back_to_the_start() -> None:
    app = replay_app(DEFAULT, speed=1.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await paused_app(pilot, app)
        # From a known moment: paused later than 0.55 s in (a loaded machine), a step would
        # pass this 5.55 s session's end and stop there.
        await pilot.press("home")
        await settle_at(app, pilot, 0.0)
        await pilot.press("right_square_bracket")
        await settle_at(app, pilot, SEEK_STEP_S)
        lines, milestones = shown(app)
        assert lines > 50 and "starting_kernel" in milestones
        await pilot.press("left_square_bracket")  # back: rebuilt from the start
        await settle_at(app, pilot, 0.0)
        await pilot.press("right_square_bracket", "home")
        await settle_at(app, pilot, 0.0)
        assert shown(app) == (0, [])
        assert player(app).paused and main_screen(app).status.state.startswith("paused")


async def test_milestone_keys_step_through_the_milestones_as_they_came() -> None:
    arrivals = milestone_arrivals(CHUNKS, LINUX)
    app = replay_app(DEFAULT, speed=1.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await paused_app(pilot, app)
        await pilot.press("home")
        await settle_at(app, pilot, 0.0)
        for count, arrival in enumerate(arrivals[:4], start=1):
            await pilot.press("right_curly_bracket")
            await settle_at(app, pilot, arrival)
            assert len(shown(app)[1]) >= count
        await pilot.press("left_curly_bracket")
        await settle_at(app, pilot, arrivals[2])
        assert shown(app)[1] == played_until(arrivals[2])[1]


async def test_seeking_back_after_the_end_plays_again() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the end")
        full = await all_shown(app, pilot)
        player(app).set_paused(True)  # paused: the seek shows its moment and stays there
        await pilot.press("home", "right_square_bracket")
        await settle_at(app, pilot, SEEK_STEP_S)
        assert screen.status.state.startswith("paused") and shown(app)[0] < full[0]
        await pilot.press("space")  # instant speed: plays on to the end
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the end again")
        await wait_until(pilot, lambda: shown(app) == full, "everything shown again")


async def test_home_in_the_search_bar_moves_the_cursor_not_the_replay() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the end")
        await pilot.press("slash", *"evm", "home")
        search = screen.query_one("#search", Input)
        assert search.cursor_position == 0 and screen.status.state.startswith("ended")


async def test_seek_keys_do_not_exist_on_a_live_port(tmp_path: Path) -> None:
    app, _link = live_app("socket://127.0.0.1:9", 115200, LINUX, tmp_path)
    async with app.run_test(size=(80, 24)):
        screen = main_screen(app)
        for action in ("replay_seek", "toggle_pause"):
            assert not screen.check_action(action, ("back",))
        titles = [command.title for command in app.get_system_commands(screen)]
        assert not any(title.startswith("replay:") for title in titles)


async def test_seeks_are_in_the_palette() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the end")
        player(app).set_paused(True)
        commands = {c.title: c for c in app.get_system_commands(screen)}
        assert {"replay: Back", "replay: Start", "replay: Next milestone"} <= set(commands)
        commands["replay: Start"].callback()
        await wait_until(pilot, lambda: player(app).clock_s() == 0.0, "the start")


def test_milestone_arrivals_are_when_a_live_capture_reached_them() -> None:
    arrivals = milestone_arrivals(CHUNKS, LINUX)
    assert arrivals == sorted(arrivals) and len(arrivals) >= 10
    for arrival in arrivals:
        before = played_until(arrival - 1e-9)[1]
        assert len(played_until(arrival)[1]) > len(before)


def test_an_unknown_seek_is_refused() -> None:
    with pytest.raises(ValueError, match="no seek"):
        seek(Player(DEFAULT, CHUNKS, LINUX, {}), "sideways")


@pytest.mark.parametrize(("typed", "moment"), [
    ("90", 90.0), ("90s", 90.0), ("2m", 120.0), ("500ms", 0.5), ("1h", 3600.0),
    ("1:30", 90.0), ("1:02:03.5", 3723.5), ("45%", 1800.0), (" End ", 4000.0),
    ("start", 0.0), ("-30", 70.0), ("+1:00", 160.0), ("-5m", 0.0), ("2h", 4000.0)])
def test_a_moment_is_read_as_typed_and_kept_within_the_session(typed: str,
                                                               moment: float) -> None:
    assert parse_moment(typed, now_s=100.0, duration_s=4000.0) == moment


@pytest.mark.parametrize("typed", ["", "abc", "120%", "1:xx", "--5", "+45%"])
def test_what_is_not_a_moment_is_refused_saying_what_is(typed: str) -> None:
    with pytest.raises(ValueError, match=r"moment|percentage"):
        parse_moment(typed, now_s=0.0, duration_s=60.0)


async def at_the_end(app: BootlabApp, pilot: Pilot[None]) -> None:
    """Wait until the replay sits at its end with the panes showing it (the last line, which
    has no newline, completed there as the replay ends)."""
    end = player(app).duration_s
    lines, milestones = played_until(end)
    await wait_until(pilot, lambda: player(app).clock_s() == end
                     and shown(app) in ((lines, milestones), (lines + 1, milestones)),
                     "the panes at the end")


async def test_go_to_a_typed_moment() -> None:
    app = replay_app(DEFAULT, speed=1.0)
    async with app.run_test(size=(120, 40)) as pilot:
        replay = await paused_app(pilot, app)
        await pilot.press("g")
        dialog = app.screen
        assert isinstance(dialog, GotoDialog)
        await pilot.press(*"soon", "enter")
        assert "not a moment" in str(dialog.query_one("#goto-problem", Label).render())
        dialog.query_one(Input).value = ""
        await pilot.press(*"50%", "enter")
        await settle_at(app, pilot, replay.duration_s / 2)
        await pilot.press("g", *"end", "enter")
        await at_the_end(app, pilot)
        await pilot.press("g", "escape")
        assert not isinstance(app.screen, GotoDialog) and replay.clock_s() == replay.duration_s


async def test_a_seek_past_the_scan_shows_the_console_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In a big session, a seek beyond the scan ahead shows the console there at once, says
    the phases are being worked out, then shows them: the panes equal playing there."""
    monkeypatch.setattr(replay_module, "SCAN_BYTES", 1)
    monkeypatch.setattr(sources, "CACHE_BYTES", 1)  # read through its index, as a big one
    release = threading.Event()
    scan_ahead = Player.scan_ahead

    def held_back(self: Player, cancelled: Callable[[], bool]) -> None:
        release.wait(10)
        scan_ahead(self, cancelled)

    monkeypatch.setattr(Player, "scan_ahead", held_back)
    app = replay_app(DEFAULT, speed=1.0)
    async with app.run_test(size=(120, 40)) as pilot:
        replay = await paused_app(pilot, app)
        screen = main_screen(app)
        end = replay.duration_s
        await pilot.press("g", *"end", "enter")
        await wait_until(pilot, lambda: replay.catching_up and shown(app)[0] > 0
                         and "phases here: scanning" in screen.status.state,
                         "the console at the end, the status saying the phases follow")
        assert shown(app) == (played_until(end)[0], [])  # no phases yet
        release.set()
        await at_the_end(app, pilot)
        assert "scanning" not in screen.status.state
