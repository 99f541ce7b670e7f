"""The console pane on its own: batching, follow mode, the partial line, pruning, safety."""

from __future__ import annotations

import pytest
from support.pilot import visible_text, wait_until
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from bootlab.core.capture.lines import Line
from bootlab.ui.widgets import log_view
from bootlab.ui.widgets.console import ConsoleView

HOSTILE = (b"\x1b]52;c;aGVsbG8=\x07clipboard \x1b]0;evil title\x07title \x1b[2J\x1b[H"
           b"cleared \x1b[31mred\x1b[0m \x1bP1$r\x1b\\ \x9b2J \x07bell \x00nul")
"""OSC 52 (clipboard write), OSC 0 (title), CSI 2J (clear screen), DCS, 8-bit CSI, BEL, NUL
and one SGR colour."""


class Harness(App[None]):
    """A console pane alone."""

    def __init__(self, max_lines: int = 100_000) -> None:
        super().__init__()
        self.max_lines = max_lines

    def compose(self) -> ComposeResult:
        yield ConsoleView(self.max_lines)


def lines(first: int, count: int, text: bytes = b"line") -> list[Line]:
    return [Line(n, text + b" %d" % n, n * 1_000_000) for n in range(first, first + count)]


async def shown(pilot: Pilot[None], console: ConsoleView) -> None:
    console.flush()
    await pilot.pause()
    await pilot.pause()


async def test_follow_mode_and_new_lines_indicator() -> None:
    app = Harness()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 200), None)
        await shown(pilot, console)
        assert console.following and console.scroll_y == console.max_scroll_y > 0
        assert "line 200" in "".join(visible_text(console))
        await pilot.press("pageup")
        assert not console.following
        top = console.scroll_y
        console.append(lines(201, 5), None)
        await shown(pilot, console)
        assert console.pending == 5 and console.scroll_y == top
        assert "+5 new lines" in str(console.border_subtitle)
        await pilot.press("end")
        await pilot.pause()
        assert console.following and console.pending == 0
        assert console.scroll_y == console.max_scroll_y
        assert "new lines" not in str(console.border_subtitle)
        assert "line 205" in "".join(visible_text(console))


async def test_scrolling_down_to_the_end_follows_again() -> None:
    app = Harness()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 100), None)
        await shown(pilot, console)
        await pilot.press("home")
        assert not console.following
        console.scroll_to(y=console.max_scroll_y, animate=False, immediate=True)
        await pilot.pause()
        assert console.following


async def test_partial_line_is_shown_and_updated_in_place() -> None:
    app = Harness()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 3), Line(4, b"=> ", 4_000_000, terminated=False))
        await shown(pilot, console)
        assert console.row_count == 4 and "=> " in visible_text(console)[3]
        console.append([], Line(4, b"=> print", 4_000_000, terminated=False))
        await shown(pilot, console)
        assert console.row_count == 4 and "=> print" in visible_text(console)[3]
        console.append([Line(4, b"=> printenv", 4_000_000)], None)
        await shown(pilot, console)
        assert console.row_count == 4 and console.partial is None
        assert "=> printenv" in visible_text(console)[3]


async def test_scrollback_is_bounded() -> None:
    app = Harness(max_lines=50)
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 120), None)
        await shown(pilot, console)
        assert console.line_count == 50 and console.lines[0].number == 71
        assert console.row_of(71) == 0 and console.row_of(70) is None
        console.time_mode = "delta"
        await pilot.press("home")
        assert visible_text(console)[0].startswith("   +0.001000 line 71")


async def test_device_escape_sequences_never_reach_the_terminal() -> None:
    app = Harness()
    async with app.run_test(size=(120, 10)) as pilot:
        console = app.query_one(ConsoleView)
        console.append([Line(1, HOSTILE, 0)], Line(2, b"\x1b]52;c;eA==\x07=> ", 1, False))
        await shown(pilot, console)
        segments = [segment for y in range(2) for segment in console.render_line(y)]
        text = "".join(segment.text for segment in segments)
        assert "clipboard" in text and "cleared" in text and "bell" in text and "=> " in text
        assert all(ord(ch) >= 0x20 and not 0x80 <= ord(ch) < 0xA0 for ch in text)
        assert "evil" not in text and "aGVsbG8" not in text
        red = [s for s in segments if s.text == "red"]
        assert red and red[0].style is not None and red[0].style.color is not None
        assert red[0].style.color.number == 1  # SGR 31 kept as a style, not as bytes


async def test_lines_arrive_in_batches_not_one_by_one() -> None:
    app = Harness()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 10), None)
        assert console.line_count == 0  # queued until the next flush
        await wait_until(pilot, lambda: console.line_count == 10, "the 30 Hz flush")


async def test_a_flood_is_drawn_a_screenful_at_a_time_and_keeps_every_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(log_view, "monotonic", lambda: now[0])
    app = Harness()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 5), None)  # fewer lines than rows: the next flush is not held
        console._flush_due()
        console.append(lines(6, 100), None)  # more than a screenful
        console._flush_due()
        assert console.line_count == 105
        console.append(lines(106, 3), None)
        console._flush_due()
        assert console.line_count == 105  # held: the pane was replaced a moment ago
        now[0] += log_view.FLOOD_FLUSH_S
        console._flush_due()
        await pilot.pause()
        assert [line.number for line in console.lines] == list(range(1, 109))
        assert "line 108" in "".join(visible_text(console))


async def test_rows_are_rendered_again_for_a_new_theme_not_for_a_focus_move() -> None:
    """Textual restyles the pane whenever the focus moves; rows rendered before stay (clearing
    them on each restyle made garbage the collector kept for long), a new theme renders them
    again in its colours."""
    app = Harness()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 30), None)
        await shown(pilot, console)
        width = console.size.width
        before = console._row_strips(0, width, console._current_styles())
        for _ in range(3):
            app.set_focus(None)
            await pilot.pause()
            console.focus()
            await pilot.pause()
        assert console._row_strips(0, width, console._current_styles()) is before
        old = console._current_styles()
        app.theme = "textual-light"
        await pilot.pause()
        styles = console._current_styles()
        assert styles.base != old.base
        gutter, _ = console._row_strips(0, width, styles)
        assert gutter is not before[0] and next(iter(gutter)).style == styles.base + styles.time


@pytest.mark.parametrize("rows", [24, 100])
async def test_rendered_rows_kept_are_two_screens_of_the_pane(rows: int) -> None:
    """Paging back a screen and forward again renders only the rows first brought into view,
    however tall the terminal; no more than two screens of rows are kept."""
    app = Harness()
    async with app.run_test(size=(80, rows)) as pilot:
        console = app.query_one(ConsoleView)
        console.append(lines(1, 1000), None)
        await shown(pilot, console)
        height = console.size.height
        rendered: list[int] = []
        render = console._render_row

        def counted(line: Line, row: int, *args: object, **kwargs: object) -> object:
            rendered.append(row)
            return render(line, row, *args, **kwargs)  # type: ignore[arg-type]

        console._render_row = counted  # type: ignore[method-assign]
        await pilot.press("pageup")
        await pilot.pause()
        assert 0 < len(rendered) <= height
        rendered.clear()
        await pilot.press("end")
        await pilot.pause()
        assert rendered == []
        assert len(console._cache) <= max(log_view.MIN_CACHED_ROWS,
                                          log_view.CACHED_SCREENS * height)
