"""SVG snapshots of the app's screens at 80x24 and 160x48 (pytest-textual-snapshot).

Each shot replays a bundled boot to its end at once, with the default theme and the config
folder empty (conftest), so nothing on screen depends on the clock or on this machine.
`pytest tests/ui/test_snapshots.py --snapshot-update` writes them again after a deliberate
change of the screens; look at the report it writes before committing them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from support.paths import EXAMPLES, example_sessions
from support.pilot import main_screen, wait_until
from textual.pilot import Pilot
from textual.widget import Widget

from bootlab.core.files.config import config_dir
from bootlab.core.files.state import AppState, save_state
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import replay_app
from bootlab.ui.widgets.phase_panel import PhasePanel
from bootlab.ui.widgets.session_list import SessionList
from bootlab.ui.widgets.settings_panel import SettingsPanel

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 48), id="160x48")]
DEFAULT = example_sessions("default")[0]
QUIET = example_sessions("quiet")[0]
SnapCompare = Callable[..., bool]


async def replayed(pilot: Pilot[None]) -> None:
    """The replay played to its end and everything it leads to drawn."""
    app = pilot.app
    assert isinstance(app, BootlabApp)
    screen = main_screen(app)
    await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the replay end")
    panel = screen.query_one(SettingsPanel)
    await wait_until(pilot, lambda: panel.facts.kernel_cmdline is not None, "facts from the log")
    console = screen.console
    console.flush()
    await pilot.pause()
    # Following scrolls after the next refresh: the picture waits for it.
    await wait_until(pilot, lambda: console.scroll_y >= console.max_scroll_y > 0
                     and scrollbar_drawn(console), "the console scrolled to its end")
    await pilot.pause()
    await phases_followed(pilot)


def scrollbar_drawn(widget: Widget) -> bool:
    """The widget's vertical scrollbar shows where it is scrolled to: the bar takes the
    scrolled size at the next layout, so a thumb drawn before it sits where it was."""
    if not widget.show_vertical_scrollbar:
        return True
    bar = widget.vertical_scrollbar
    return bar.window_virtual_size == widget.virtual_size.height \
        and bar.window_size == widget.scrollable_content_region.height \
        and bar.position == widget.scroll_y


async def phases_followed(pilot: Pilot[None]) -> None:
    """The phase pane scrolled to its newest row: it follows the boot's newest milestone by
    moving its cursor there, and scrolls after the next refresh (a picture taken one refresh
    early shows it where it was)."""
    app = pilot.app
    assert isinstance(app, BootlabApp)
    panel = main_screen(app).query_one(PhasePanel)
    def followed() -> bool:
        rows_shown = panel.scrollable_content_region.height - panel.header_height
        return panel.cursor_row == panel.row_count - 1 \
            and panel.scroll_y <= panel.cursor_row < panel.scroll_y + rows_shown
    await wait_until(pilot, lambda: followed() and scrollbar_drawn(panel),
                     "the phase pane at its newest row")
    await pilot.pause()


def then(*steps: Callable[[Pilot[None]], Awaitable[None]]) -> Callable[[Pilot[None]],
                                                                        Awaitable[None]]:
    async def run(pilot: Pilot[None]) -> None:
        for step in steps:
            await step(pilot)
    return run


@pytest.mark.parametrize("size", SIZES)
def test_main_screen(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(replay_app(DEFAULT, speed=0.0), terminal_size=size,
                        run_before=replayed)


@pytest.mark.parametrize("size", SIZES)
def test_main_screen_with_baseline_and_budgets(snap_compare: SnapCompare,
                                               size: tuple[int, int]) -> None:
    state = AppState()
    state.set_baseline(EXAMPLES, QUIET)
    save_state(state)
    budgets = config_dir() / "budgets.toml"
    budgets.write_text('[budgets]\ninit = 4.8\nkernel_done = "4s"\nnetwork_up = 5.0\n',
                       encoding="utf-8")

    async def compared(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, BootlabApp)
        panel = main_screen(app).query_one(PhasePanel)
        await wait_until(pilot, lambda: panel.border_subtitle, "the baseline")
        await pilot.pause()
        await phases_followed(pilot)   # the budget rows came with the baseline

    assert snap_compare(replay_app(DEFAULT, speed=0.0), terminal_size=size,
                        run_before=then(replayed, compared))


async def press(pilot: Pilot[None], key: str, screen: str) -> None:
    """Open a screen with a key and let its workers (reading sessions) finish."""
    app = pilot.app
    await pilot.press(key)
    await wait_until(pilot, lambda: type(app.screen).__name__ == screen, screen)
    own = [worker for worker in app.workers if worker.node is app.screen]
    if own:  # (an empty list would mean every worker, the replay's too)
        await app.workers.wait_for_complete(own)
    # ... and handle what they posted (a loaded machine is slow to): the list is read through
    await wait_until(pilot, lambda: not getattr(app.screen, "loading", False), f"{screen} read")
    await pilot.pause(0.5)  # what the workers posted is shown in batches
    await pilot.pause()


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Dates and clocks drawn in UTC, whatever the machine's zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def sessions_app(folder: Path) -> BootlabApp:
    """The replay, with `folder` as the sessions folder."""
    return replay_app(DEFAULT, speed=0.0, sessions=folder)


@pytest.mark.parametrize("size", SIZES)
def test_sessions_screen(snap_compare: SnapCompare, size: tuple[int, int],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    async def sessions(pilot: Pilot[None]) -> None:
        await press(pilot, "f2", "SessionsScreen")
        table = pilot.app.screen.query_one(SessionList)
        await wait_until(pilot, lambda: table.row_count == 6 and table.size.height > 0,
                         "the six sessions listed")

    # The screen names its folder: relative, so the picture does not depend on the checkout.
    monkeypatch.chdir(EXAMPLES.parent)
    assert snap_compare(sessions_app(Path(EXAMPLES.name)), terminal_size=size,
                        run_before=then(replayed, sessions))


@pytest.mark.parametrize("size", SIZES)
def test_compare_screen(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    async def compare(pilot: Pilot[None]) -> None:
        await press(pilot, "f3", "CompareScreen")

    assert snap_compare(sessions_app(EXAMPLES), terminal_size=size,
                        run_before=then(replayed, compare))
