"""The app replaying the bundled example boots: console, phases, time column, search, keys."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from support.paths import example_sessions
from support.pilot import main_screen, row_text, settings_rows, visible_text, wait_until
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import Static

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.sources import open_source
from bootlab.session.replay import Player
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import first_example, replay_app
from bootlab.ui.messages import Received
from bootlab.ui.screens.help import HelpScreen
from bootlab.ui.widgets.console import ConsoleView
from bootlab.ui.widgets.phase_panel import GOAL_MARK, PhasePanel
from bootlab.ui.widgets.settings_panel import SettingsPanel

DEFAULT = example_sessions("default")[0]
QUIET = example_sessions("quiet")[0]


def expected(path: Path) -> tuple[int, list[str]]:
    source = open_source(path)
    analysis = analyze(source.data, load_profile("linux"), source.line_time)
    return analysis.lines, [m.id for m in analysis.milestones]


def phase_ids(app: BootlabApp) -> list[str]:
    table = main_screen(app).query_one(PhasePanel)
    return [table.get_row_at(i)[0].plain.removesuffix(f" {GOAL_MARK}").rstrip("*")
            for i in range(table.row_count)]


async def play_to_end(app: BootlabApp, pilot: Pilot[None]) -> None:
    await wait_until(pilot, lambda: main_screen(app).status.state.startswith("ended"),
                     "the replay end")
    main_screen(app).console.flush()
    await pilot.pause()


def test_no_argument_replays_the_first_default_example() -> None:
    assert first_example() == DEFAULT


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_replay_fills_the_console_and_the_phase_pane(size: tuple[int, int]) -> None:
    lines, ids = expected(DEFAULT)
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=size) as pilot:
        await play_to_end(app, pilot)
        console = main_screen(app).console
        assert console.line_count == lines
        assert phase_ids(app) == ids and ids[-1] == "login"
        # following scrolls after the next refresh
        await wait_until(pilot, lambda: console.scroll_y == console.max_scroll_y, "the end")
        assert console.following
        assert any("board login:" in row for row in visible_text(console))
        status = str(main_screen(app).query_one("StatusLine", Static).render())
        # the goal's time is what a narrow line keeps; the source name and clock when there is room
        assert "login 5.50 s" in status
        if size[0] >= 120:
            assert "replay: " + DEFAULT.name[:20] in status and "T+5.4" in status


async def test_phases_build_up_as_the_boot_plays() -> None:
    seen: list[Message] = []
    app = replay_app(QUIET, speed=3.0)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await play_to_end(app, pilot)
        assert phase_ids(app)[-1] == "login"
        assert "kernel_done" in phase_ids(app)  # a fallback milestone, marked with *
    counts = [len(m.event.boot.milestones) for m in seen
              if isinstance(m, Received) and m.event.boot]
    assert counts == sorted(counts) and len(set(counts)) >= 3 and counts[0] < counts[-1]


async def test_pause_and_speed_keys() -> None:
    app = replay_app(DEFAULT, speed=1.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        player = screen.source
        assert isinstance(player, Player)
        await pilot.pause(0.3)                         # between two lines, as a player is
        before = player.clock_s()
        await pilot.press("space")
        assert screen.status.state == "paused (1x)"   # the speed stays shown
        clock = player.clock_s()
        assert clock >= before                         # the clock never goes back on pausing
        await pilot.pause(0.2)
        assert player.clock_s() == clock
        speeds = []
        for _ in range(3):
            await pilot.press("x")
            speeds.append(player.speed)
        assert speeds == [10.0, 0.0, 1.0] and screen.status.state == "paused (1x)"
        await pilot.press("space")
        assert screen.status.state == "playing 1x"
        await pilot.press("x")
        assert player.speed == 10.0
        await play_to_end(app, pilot)
        await pilot.press("x")
        assert screen.status.state.startswith("ended")
        # space at the end plays it again from the start (at 1x: it is seen playing)
        await pilot.press("x")
        await pilot.press("space")
        await wait_until(pilot, lambda: not player.ended and player.clock_s() < 1.0,
                         "the replay to start again")
        # a board key in a replay says why it does nothing
        await pilot.press("R")
        await wait_until(pilot, lambda: any("a replay has no board" in n.message
                                            for n in app._notifications), "the reason")


async def test_time_column_cycles_between_modes() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await play_to_end(app, pilot)
        console = main_screen(app).console
        row = next(i for i, line in enumerate(console.lines) if b"Calibrating delay" in line.raw)
        shown = {}
        for _ in range(5):
            shown[console.time_mode] = row_text(console, row)[:13].strip()
            assert str(console.border_title).endswith(
                {"elapsed": "elapsed", "delta": "delta", "wall": "clock",
                 "kernel": "printk", "off": "no time column"}[console.time_mode])
            await pilot.press("m")
        assert console.time_mode == "elapsed"
        assert shown["off"] == "[    0.008487"  # no time column: the line itself
        assert float(shown["elapsed"]) == pytest.approx(3.564, abs=0.001)
        assert shown["delta"].startswith("+0.0")
        assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", shown["wall"])
        assert shown["kernel"] == "0.008487"


async def test_search_finds_and_moves_between_matches() -> None:
    notes: list[Message] = []
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24), message_hook=notes.append) as pilot:
        await play_to_end(app, pilot)
        console = main_screen(app).console
        await pilot.press("slash", *"evm:", "enter")
        first = console.match_row
        assert first is not None and b"evm:" in console.lines[first].raw
        assert console.has_focus and not console.following
        y = first - int(console.scroll_y)
        assert 0 <= y < console.size.height
        text_styles = [{s.style for s in list(console.render_line(row))[1:]} for row in (y, y + 1)]
        assert text_styles[0] - text_styles[1]  # the match line has its own highlight style
        await pilot.press("n")
        second = console.match_row
        assert second is not None and second > first and b"evm:" in console.lines[second].raw
        await pilot.press("N")
        assert console.match_row == first
        await pilot.press("slash", *"no such text here", "enter")  # replaces the query
        assert console.match_row == first
    assert any(isinstance(m, Notify) and "not found" in m.notification.message for m in notes)


async def test_settings_key_marks_pending_and_previews_the_commands() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await play_to_end(app, pilot)
        panel = main_screen(app).query_one(SettingsPanel)
        await wait_until(pilot, lambda: panel.facts.kernel_cmdline is not None,
                         "facts from the log")
        await pilot.press("q")  # the console has the focus: no setting changes
        assert panel.pending == {}
        await pilot.press("tab", "q")
        assert isinstance(app.focused, PhasePanel) and panel.pending == {"quiet": True}
        preview = "\n".join(panel.preview())
        assert "setenv bootargs" in preview and "quiet" in preview
        shown = str(panel.query_one("#settings-preview", Static).render())
        assert "setenv bootargs" in shown
        assert "→on" in str(panel.query_one("#settings-list", Static).render())
        await pilot.press("q")
        assert panel.pending == {}


async def replayed_settings(path: Path, pilot: Pilot[None], app: BootlabApp) -> SettingsPanel:
    await play_to_end(app, pilot)
    panel = main_screen(app).query_one(SettingsPanel)
    await wait_until(pilot, lambda: "bootdelay" in panel.evidence, f"evidence from {path.name}")
    return panel


@pytest.mark.parametrize(("label", "shown"), [
    ("default", {"d": "off No autoboot delay    2 · log 13",
                 "t": "on  printk timestamps    kernel default · log 78",
                 "q": "off Quiet kernel         log 116"}),
    ("quiet", {"d": "off No autoboot delay    2 · log 13",
               "q": "on  Quiet kernel         inferred"}),
    ("bootdelay0", {"d": "on  No autoboot delay    log 13",
                    "t": "on  printk timestamps    kernel default · log 78"}),
])
async def test_replay_shows_the_settings_the_log_proves(label: str, shown: dict[str, str]) -> None:
    path = example_sessions(label)[0]
    app = replay_app(path, speed=0.0)
    async with app.run_test(size=(160, 48)) as pilot:
        panel = await replayed_settings(path, pilot, app)

        def drawn() -> dict[str, str]:
            rows = {row[0]: row[2:] for row in settings_rows(panel)}
            return {key: rows.get(key, "") for key in shown}

        with contextlib.suppress(AssertionError):  # facts follow the milestones in a worker
            await wait_until(pilot, lambda: drawn() == shown, "the whole log's evidence")
        assert drawn() == shown
        rows = {row[0]: row[2:] for row in settings_rows(panel)}
        assert "unknown" not in rows["d"] + rows["q"]


async def test_settings_titles_are_whole_at_100_columns() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = await replayed_settings(DEFAULT, pilot, app)
        rows = settings_rows(panel)
        assert len(rows) == len(panel.settings)
        for setting, row in zip(panel.settings, rows, strict=True):
            assert f" {setting.title}" in row, row
        # The whole evidence of the countdown fits too.
        assert rows[0].endswith("No autoboot delay    2 · log 13")
        assert panel.region.right <= app.size.width


async def test_settings_cursor_shows_what_proves_a_state() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = await replayed_settings(DEFAULT, pilot, app)
        detail = panel.query_one("#settings-detail", Static)
        assert not detail.display or not panel.has_focus
        panel.focus()
        await pilot.press(*["down"] * 8)  # printk timestamps, under the visible rows at first
        assert panel.settings[panel.cursor].id == "printk_time"
        await pilot.pause()
        text = str(detail.render())
        assert text.startswith("printk timestamps: on · kernel default (CONFIG_PRINTK_TIME)")
        assert "line 78: [    0.000000] Booting Linux" in text
        await wait_until(pilot, lambda: detail.outer_size.height > 0, "the detail drawn")
        visible = range(int(panel.scroll_y), int(panel.scroll_y) + panel.scrollable_content_region
                        .height - detail.outer_size.height)
        assert panel.cursor in visible
        await pilot.press("enter")
        assert panel.pending == {"printk_time": False}


async def test_help_lists_every_key() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        sections = dict(main_screen(app).key_sections())
        keys = [key for rows in sections.values() for key, _ in rows]
        assert {"Ctrl-T", "q", "/", "m", "n", "N", "space", "x", "?", "End"} <= set(keys)
        assert app.screen.sections == main_screen(app).key_sections()
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_themes_are_registered_and_selectable() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "bootlab-dark"
        assert {"bootlab-light", "bootlab-high-contrast"} <= set(app.available_themes)
        app.theme = "bootlab-high-contrast"
        await pilot.pause()
        assert isinstance(main_screen(app).console, ConsoleView)


async def test_the_app_collects_garbage_less_often_while_it_runs() -> None:
    # a flood's 100,000 console lines make each full collection long: the app raises the
    # youngest generation's threshold for its life, collects the oldest after each middle one
    # (what starting made is frozen out of it), and puts Python's back when it ends
    import gc

    from bootlab.ui.app import GC_MIDDLE, GC_YOUNG

    before = gc.get_threshold()
    assert before[0] != GC_YOUNG
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        assert gc.get_threshold() == (GC_YOUNG, before[1], GC_MIDDLE)
        await pilot.pause()
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
