"""Every theme the app offers keeps the main screen readable: the WCAG contrast of what is drawn.

The themes are bootlab's own (themes/*.toml) and Textual's built-in ones: the command palette
offers all of them. For each, a bundled boot is replayed (with a baseline and budgets, so the
phase pane's coloured marks show too) at 100x30, the theme is switched while the app runs, and
for every cell of text in the frame the terminal would get, the WCAG 2 contrast ratio of its
colour to its background is measured: the console (its time column too, and a search match
with its note in the border), the phase pane (title, header, rows, the cursor's row with and
without the focus), the settings pane (title, list, a pending setting and its preview; focused,
its cursor and detail), the status line (with an alarm) and the footer.

Text must reach 4.5, WCAG's AA level for normal text. Text in the theme's muted colour
($text-muted: the console's time column, where a setting's state is seen, the preview, the
footer's descriptions, the panes' hints) is secondary by design, meant to recede behind what
it annotates, and must reach 3.0, WCAG's level for large text and for the parts of an
interface.

Not measured: cells that are no text (blanks, box drawing: borders, bar ticks; block elements:
phase bars, scrollbars), keys the footer shows disabled (WCAG sets no contrast for inactive
controls), and the ANSI themes, which draw in the terminal's own 16 colours: only the terminal
knows them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from rich.cells import cell_len
from rich.color_triplet import ColorTriplet
from rich.style import Style
from support.paths import EXAMPLES, ROOT, example_sessions
from support.pilot import main_screen, wait_until
from textual.color import Color
from textual.geometry import Region
from textual.pilot import Pilot
from textual.theme import BUILTIN_THEMES
from textual.widget import Widget
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from bootlab.core.files.config import config_dir
from bootlab.core.files.state import AppState, save_state
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import replay_app
from bootlab.ui.themes import load_themes
from bootlab.ui.widgets.key_footer import KeyFooter
from bootlab.ui.widgets.phase_panel import PhasePanel
from bootlab.ui.widgets.settings_panel import SettingsPanel
from bootlab.ui.widgets.status_line import StatusLine

TEXT = 4.5
"""WCAG AA for normal text."""
SECONDARY = 3.0
"""WCAG AA for large text and the parts of an interface: the floor for muted text."""
MUTED_SLACK = 3
"""Rounding between Textual's ways of blending a translucent colour (per RGB channel)."""
BUNDLED = load_themes([ROOT / "themes"]).themes
OFFERED = {**BUILTIN_THEMES, **BUNDLED}
"""The themes the app offers (a bundled one replaces a built-in of its name)."""
THEMES = [pytest.param(name, marks=pytest.mark.skip(reason="ANSI: the terminal's colours"))
          if theme.ansi else name for name, theme in OFFERED.items()]
SIZE = (100, 30)
SEARCHED = "virtio"
"""A word the replayed boot's log holds: the console shows a match, and where it is."""

Cell = tuple[str, Style]


def luminance(colour: ColorTriplet) -> float:
    """WCAG 2 relative luminance of an sRGB colour."""
    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4
    red, green, blue = map(linear, colour)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first: ColorTriplet, second: ColorTriplet) -> float:
    """WCAG 2 contrast ratio of two colours, 1 to 21."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def is_text(character: str) -> bool:
    """A character drawn as text: not blank, not box drawing or a block element."""
    return bool(character.strip()) and not 0x2500 <= ord(character) <= 0x259F


@dataclass
class Measured:
    """What an area of the screen measured: its worst ratio, and the cells below their
    floor (one line per colour pair)."""

    worst: float
    failures: list[str]


def frame(app: BootlabApp) -> list[list[Cell]]:
    """The screen's cells as the terminal gets them (the frame `App.export_screenshot`
    draws)."""
    update = app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens)
    rows: list[list[Cell]] = []
    for line in update.strips:
        row: list[Cell] = []
        for strip in line:
            for segment in strip:
                style = segment.style or Style.null()
                for character in segment.text:
                    row += [(character, style)] + [("", style)] * (cell_len(character) - 1)
        rows.append(row)
    return rows


def colours(style: Style) -> tuple[ColorTriplet, ColorTriplet] | None:
    """The text colour and the background a cell shows (None: one of them is left to the
    terminal)."""
    colour, background = style.color, style.bgcolor
    if colour is None or background is None or colour.is_default or background.is_default:
        return None
    text, ground = colour.get_truecolor(), background.get_truecolor()
    return (ground, text) if style.reverse else (text, ground)


def is_muted(text: ColorTriplet, ground: ColorTriplet, muted: str) -> bool:
    """The text is in the theme's muted colour (`muted`: $text-muted, such as `auto 60%`),
    as Textual blends it on this background."""
    background = Color(*ground)
    if muted.startswith("auto"):
        alpha = float(muted.split()[1].rstrip("%")) / 100 if " " in muted else 1.0
        expected = background + background.get_contrast_text(alpha)
    else:
        expected = background + Color.parse(muted)
    return all(abs(a - b) <= MUTED_SLACK for a, b in zip(text, expected.rgb, strict=True))


def inactive(app: BootlabApp, x: int, y: int) -> bool:
    """The cell shows a key the footer shows disabled."""
    widget, _ = app.screen.get_widget_at(x, y)
    return isinstance(widget, FooterKey) and widget.has_class("-disabled")


def measure(app: BootlabApp, region: Region) -> Measured:
    """The contrast of every text cell in `region` of the screen."""
    muted = app.theme_variables["text-muted"]
    rows = frame(app)
    worst, failures = 21.0, {}
    for y in range(region.y, region.bottom):
        for x in range(region.x, region.right):
            character, style = rows[y][x]
            if not is_text(character) or inactive(app, x, y):
                continue
            shown = colours(style)
            sample = "".join(c for c, _ in rows[y][x:min(region.right, x + 16)]).rstrip()
            if shown is None:
                worst = 0.0
                failures.setdefault(("default", ""), f"{sample!r}: the terminal's own colours")
                continue
            ratio = contrast(*shown)
            worst = min(worst, ratio)
            floor = SECONDARY if is_muted(*shown, muted) else TEXT
            if ratio < floor:
                text, ground = (Color(*c).hex for c in shown)
                failures.setdefault((text, ground), f"{sample!r}: {ratio:.2f} < {floor}, "
                                    f"{text} on {ground}")
    return Measured(worst, list(failures.values()))


def areas(app: BootlabApp) -> Iterator[tuple[str, Region]]:
    """The parts of the main screen measured, by name."""
    screen = main_screen(app)
    yield "console", screen.console.region
    yield "phases", screen.query_one(PhasePanel).region
    yield "settings", screen.query_one(SettingsPanel).region
    yield "status line", screen.query_one(StatusLine).region
    yield "footer", screen.query_one(KeyFooter).region


async def focused(pilot: Pilot[None], widget: Widget) -> None:
    """Move the focus to `widget` and let it be drawn."""
    widget.focus()
    await wait_until(pilot, lambda: widget.has_focus, f"the focus on {widget}")
    await pilot.pause()


def cursor_drawn(app: BootlabApp, settings: SettingsPanel) -> bool:
    """The settings pane draws its cursor (its row's background is the cursor's)."""
    listing = settings.query_one("#settings-list", Static).region
    _, style = frame(app)[listing.y + settings.cursor][listing.x]
    return style.bgcolor == settings.get_component_rich_style("settingspanel--cursor").bgcolor


async def measured_screen(name: str) -> dict[str, Measured]:
    """Replay a boot, switch to theme `name`, and measure the main screen's parts."""
    state = AppState()
    state.set_baseline(EXAMPLES, example_sessions("quiet")[0])
    save_state(state)
    (config_dir() / "budgets.toml").write_text(
        '[budgets]\ninit = 4.8\nkernel_done = "4s"\nnetwork_up = 5.0\n', encoding="utf-8")
    app = replay_app(example_sessions("default")[0], speed=0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = main_screen(app)
        assert set(app.available_themes) == set(OFFERED)  # the palette offers these, no more
        phases, settings = screen.query_one(PhasePanel), screen.query_one(SettingsPanel)
        line = screen.query_one(StatusLine)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the end")
        await wait_until(pilot, lambda: phases.border_subtitle, "the baseline")
        await wait_until(pilot, lambda: settings.facts.kernel_cmdline is not None, "facts")
        settings.toggle(settings.settings[0])  # pending: its preview, and a part of the status
        screen.status.unrecorded = True  # an alarm
        await wait_until(pilot, lambda: "NOT RECORDING" in str(line.render()), "the alarm")
        switched: list[str] = []
        app.theme_changed_signal.subscribe(screen, lambda theme: switched.append(theme.name),
                                           immediate=True)
        app.theme = "bootlab-light" if name == app.theme else name
        app.theme = name
        await wait_until(pilot, lambda: switched[-1:] == [name], f"the theme {name}")
        await pilot.pause()
        found = {area: measure(app, region) for area, region in areas(app)}
        await focused(pilot, phases)
        found["phases, focused"] = measure(app, phases.region)
        await focused(pilot, settings)
        await wait_until(pilot, lambda: cursor_drawn(app, settings), "the settings cursor")
        found["settings, focused"] = measure(app, settings.region)
        await focused(pilot, screen.console)
        await pilot.press("slash", *SEARCHED, "enter")
        await wait_until(pilot, lambda: screen.console.search_note, "the search's match")
        await pilot.pause()
        found["console, searched"] = measure(app, screen.console.region)
    return found


@pytest.mark.parametrize("name", THEMES)
async def test_theme_keeps_text_readable(name: str) -> None:
    found = await measured_screen(name)
    problems = [f"{area} (worst {result.worst:.2f}): {failure}"
                for area, result in found.items() for failure in result.failures]
    assert not problems, f"{name}: text below its contrast floor:\n" + "\n".join(problems)
