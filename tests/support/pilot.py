"""Helpers for the app's Pilot tests: waiting for a condition, reading rendered rows."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Static

from bootlab.ui.app import BootlabApp
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.widgets.log_view import LogView
from bootlab.ui.widgets.settings_panel import SettingsPanel


async def wait_until(pilot: Pilot[None], condition: Callable[[], object], what: str,
                     timeout_s: float = 10.0) -> None:
    """Let the app run until `condition()` holds."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def main_screen(app: BootlabApp) -> MainScreen:
    """The app's main screen (the default screen, under any modal one)."""
    screen = app.screen_stack[0]
    assert isinstance(screen, MainScreen)
    return screen


def row_text(log: LogView, row: int) -> str:
    """The text a row renders (time column included), scrolled to show it first."""
    gutter, text = log._row_strips(row, log.size.width, log._current_styles())
    return gutter.text + text.text


def visible_text(log: LogView) -> list[str]:
    """The rows on screen now, as rendered."""
    return [log.render_line(y).text for y in range(log.size.height)]


def settings_rows(panel: SettingsPanel) -> list[str]:
    """The settings list's rows as drawn (at the pane's width: cut ones end in an ellipsis)."""
    listing = panel.query_one("#settings-list", Static)
    return [strip.text.rstrip() for strip in
            listing.render_lines(Region(0, 0, listing.size.width, listing.size.height))]
