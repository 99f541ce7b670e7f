"""The log pane: received lines on Textual's line API, with a time column, follow mode, search.

Lines are kept as data (the exact bytes and their time, packed in blocks: `LineStore`) and
only the rows on screen are rendered, through an LRU cache of `Strip`s. Appends are queued
and applied by a 30 Hz timer: one `virtual_size` change and one refresh per batch however
many lines came. A batch that replaces every row on screen (a flood) is drawn at most every
FLOOD_FLUSH_S: nobody reads a pane scrolling by a screenful 30 times a second, and each such
frame renders every row anew, so those frames are what would keep the app from answering
keys. Device text is cleaned (`bootlab.core.capture.text.clean`) and only its SGR colours are
parsed into styles, so no byte from the device reaches the terminal as a control sequence.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import monotonic
from typing import ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.cache import FIFOCache
from textual.geometry import Region, Size
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from bootlab.core.capture.lines import SCROLLBACK_LINES, Line
from bootlab.core.capture.text import clean
from bootlab.core.capture.textlog import time_label
from bootlab.ui.widgets.line_store import LineStore

TIME_TITLES = {"elapsed": "elapsed", "delta": "delta", "wall": "clock", "kernel": "printk",
               "off": "no time column"}
GUTTER = 13
"""Columns of the time column (12 and a space)."""
SHOWN_BYTES = 4096
"""Bytes of a line that are shown (the session keeps all of them)."""
FLUSH_S = 1 / 30
FLOOD_FLUSH_S = 0.1
"""Shortest time between two batches that each fill the pane with new rows."""
CACHED_SCREENS = 2
"""Screens of rendered rows kept (two Strips a row, ~2.8 KB for 120 columns), at least
MIN_CACHED_ROWS: a scroll or a redraw renders only the rows it brings into view. A dozen
screens (512 rows) were kept before: under a flood they are ~1.4 MB of rows rendered and
dropped again within a second, and, living among the flood's short-lived objects, they left
the allocator's pools part-used, so the app's memory grew for seconds after its line cap
(`bench/bench_tui.py`: 1.0-1.5 MB, against 0.7-1.0 MB with two screens). A `FIFOCache`, a
plain dict: Textual's `LRUCache` links its entries in a ring, so each clearing left a cycle of
rows for the collector, whose oldest generation is walked seldom."""
MIN_CACHED_ROWS = 64


class _Styles(NamedTuple):
    """The pane's styles a rendered row is made with; rows are rendered again when they
    change (a theme, a style sheet), not on every restyle (Textual restyles the pane whenever
    the focus moves)."""

    base: Style
    time: Style
    match: Style
    partial: Style
    typed: Style


def text_cells(line: Line) -> int:
    """Columns a line's text takes as shown (escapes removed, tabs expanded)."""
    return len(clean(line.raw[:SHOWN_BYTES]).expandtabs())


def hex_text(line: Line) -> str:
    """A line's bytes in hex, its newline (0a) too when it has one: what the hex view shows
    (a CR-LF line end, a NUL, a stray escape are all there to read)."""
    return (line.raw[:SHOWN_BYTES] + (b"\n" if line.terminated else b"")).hex(" ")


class Wrapped:
    """Where each held line starts among the rows when long lines wrap: one row a line at
    the least, one more for every `width` columns of its text. Kept as lines come and go
    (a flood appends and prunes at every batch), laid out anew when the width changes."""

    def __init__(self, cells: Callable[[Line], int] = text_cells) -> None:
        self.cells = cells
        """Columns a line takes unwrapped."""
        self.width = 0
        self._starts: list[int] = []
        """Absolute first row of each held line (rows of pruned lines counted too)."""
        self._end = 0
        """Absolute row after the last held line."""
        self._base = 0
        """Absolute first row of the first held line."""

    def _reset(self, width: int) -> None:
        self.width, self._starts, self._end, self._base = width, [], 0, 0

    @property
    def rows(self) -> int:
        """Rows the held lines take."""
        return self._end - self._base

    def height(self, line: Line, width: int) -> int:
        """Rows `line` takes at `width` columns."""
        return max(1, -(-self.cells(line) // max(1, width)))

    def extend(self, lines: Sequence[Line], width: int) -> None:
        """Lay out the lines not laid out yet (all of them at a new width)."""
        if width != self.width:
            self._reset(width)
        for index in range(len(self._starts), len(lines)):
            self._starts.append(self._end)
            self._end += self.height(lines[index], width)

    def drop(self, count: int) -> None:
        """The first `count` held lines were pruned."""
        del self._starts[:count]
        self._base = self._starts[0] if self._starts else self._end

    def first_row(self, line: int) -> int:
        """The row where held line `line` starts (past the end: the rows after them)."""
        if line >= len(self._starts):
            return self.rows + line - len(self._starts)
        return self._starts[line] - self._base

    def locate(self, row: int, held: int) -> tuple[int, int]:
        """(line, which of its rows) of a row; the partial line (index `held`) after the
        held ones."""
        absolute = row + self._base
        if absolute >= self._end:
            return held, absolute - self._end
        line = bisect_right(self._starts, absolute) - 1
        return line, absolute - self._starts[line]


@dataclass(frozen=True)
class Found:
    """A search match: its row, its place among all the matches (`3` of `17`), and whether
    the search went round an end of the log to reach it."""

    row: int
    number: int
    total: int
    wrapped: bool


class LogView(ScrollView, can_focus=True):
    """Received lines with their times; follows new lines until scrolled back."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"logview--time", "logview--match",
                                             "logview--partial", "logview--typed"}
    DEFAULT_CSS = """
    LogView {
        background: $surface;
        color: $text;
        overflow-x: auto;
        overflow-y: scroll;
        & > .logview--time { color: $text-muted; }
        & > .logview--match { background: $accent 20%; color: $text; text-style: bold; }
        & > .logview--partial { text-style: underline; }
        & > .logview--typed { color: $text-muted; text-style: italic; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("end", "follow", "Follow", id="follow")]

    following: var[bool] = var(True)
    """New lines scroll into view; scrolling back turns this off, End turns it on."""
    time_mode: var[str] = var("elapsed")
    """One of TIME_MODES."""
    pending: var[int] = var(0)
    """Lines that arrived while not following."""
    wrap: var[bool] = var(False)
    """Long lines go on over the rows below them (else they are cut at the pane's edge, and
    Left and Right scroll sideways)."""
    hex_view: var[bool] = var(False)
    """Each line shown as its bytes in hex (`hex_text`), not as text."""

    def __init__(self, max_lines: int = SCROLLBACK_LINES) -> None:
        super().__init__()
        self.max_lines = max_lines
        self.epoch_s: float | None = None
        """Wall-clock time of the session's time zero (for the clock column)."""
        self._lines = LineStore()
        self._dropped = 0
        """Lines pruned from the front: row r holds the log's line `_dropped + r`, counting
        every line ever appended from 0 (the cache key, stable across pruning)."""
        self._before_t: int | None = None
        """Time of the last pruned line (the first kept line's delta needs it)."""
        self._partial: Line | None = None
        self._incoming: list[Line] = []
        self._incoming_partial: Line | None = None
        self._dirty = False
        self._next_flush = 0.0
        """Monotonic time before which the timer applies no batch (see FLOOD_FLUSH_S)."""
        self._longest = 0
        """Bytes of the longest line held (up to SHOWN_BYTES): the scrolled width."""
        self._typed: dict[int, str] = {}
        """Local echo: line number -> what was typed while it was the line arriving."""
        self._references: list[tuple[int, float]] = []
        """(first line number of a boot, its reference time in s), ascending."""
        self._reference_generation = 0
        self._match: int | None = None
        """Absolute index of the highlighted search match."""
        self._styles: _Styles | None = None
        """What the cached rows were rendered with."""
        self._cache: FIFOCache[tuple[int, int, str, bool, int, bool], tuple[Strip, Strip]] = \
            FIFOCache(MIN_CACHED_ROWS)
        self._cached_rows = MIN_CACHED_ROWS
        self._wrapped = Wrapped(self._cells)
        """Where each line starts among the rows, while `wrap` is on."""

    def on_mount(self) -> None:
        """Start the batch timer."""
        self.set_interval(FLUSH_S, self._flush_due)

    def _flush_due(self) -> None:
        if monotonic() >= self._next_flush:
            self.flush()

    @property
    def line_count(self) -> int:
        """Completed lines held (the partial line not counted)."""
        return len(self._lines)

    @property
    def lines(self) -> Sequence[Line]:
        """The completed lines held, oldest first."""
        return self._lines

    @property
    def partial(self) -> Line | None:
        """The line still arriving, as shown."""
        return self._partial

    @property
    def match_row(self) -> int | None:
        """Row of the highlighted search match."""
        return None if self._match is None else self._match - self._dropped

    def lines_since(self, number: int) -> list[Line]:
        """Lines held or queued from stream line `number` on."""
        return [*self._lines.since(number),
                *(line for line in self._incoming if line.number >= number)]

    def row_of(self, number: int) -> int | None:
        """The row showing stream line `number` (None: pruned, or not received yet)."""
        row = self._lines.index_of(number)
        if row < len(self._lines) and self._lines[row].number == number:
            return row
        return None

    def append(self, lines: Sequence[Line], partial: Line | None) -> None:
        """Queue lines and the current partial line; the next flush shows them."""
        self._incoming.extend(lines)
        self._incoming_partial = partial
        self._dirty = True

    def clear(self) -> None:
        """Forget every line (a replay seeking back fills the view again from the start)."""
        self._lines.clear()
        self._incoming.clear()
        self._partial = self._incoming_partial = None
        self._dropped, self._before_t, self._match = 0, None, None
        self._longest = 0
        self._typed.clear()
        self._references = []
        self._cache.clear()
        self._dirty = False
        self.pending = 0
        self.virtual_size = Size(GUTTER, 0)
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def set_references(self, references: list[tuple[int, float]]) -> None:
        """Set each boot's reference time: (its first line number, time in s)."""
        if references != self._references:
            self._references = references
            self._reference_generation += 1
            if self.time_mode == "elapsed":
                self.refresh()

    def flush(self) -> None:
        """Apply queued lines: one size change, one refresh, scroll if following."""
        if not self._dirty:
            return
        self._dirty = False
        new, self._incoming = self._incoming, []
        start = len(self._lines)
        self._partial = self._incoming_partial
        if len(new) >= self.size.height > 0:
            self._next_flush = monotonic() + FLOOD_FLUSH_S
        if new:
            self._lines.extend(new)
            longest = max(len(line.raw) for line in new)
            self._longest = max(self._longest, min(longest, SHOWN_BYTES))
        pruned = self._prune()
        if self.wrap:
            self._wrapped.extend(self._lines, self._body())
        self.virtual_size = self._virtual_size()
        if self.following:
            # After the refresh: the new size (and a new horizontal scrollbar) is known then.
            self.call_after_refresh(self._keep_following)
        else:
            self.pending += len(new)
            if pruned:
                self.scroll_to(y=max(0, self.scroll_y - pruned), animate=False, immediate=True)
        if pruned:
            self.refresh()
        else:
            self.refresh_lines(start, len(new) + 1)

    @property
    def row_count(self) -> int:
        """Rows shown: the lines (each on as many rows as it takes, wrapped) and the partial
        line."""
        if not self.wrap:
            return len(self._lines) + (self._partial is not None)
        partial = 0 if self._partial is None else self._wrapped.height(self._partial,
                                                                       self._body())
        return self._wrapped.rows + partial

    def _virtual_size(self) -> Size:
        """The scrolled area: as wide as the longest line, or the pane when lines wrap."""
        longest = 3 * self._longest + 2 if self.hex_view else self._longest
        typed = max(map(len, self._typed.values()), default=0)
        return Size(self.scrollable_content_region.width if self.wrap
                    else GUTTER + longest + typed, self.row_count)

    def _cells(self, line: Line) -> int:
        """Columns a line takes unwrapped: its text (or hex) and what was typed on it."""
        cells = len(hex_text(line)) if self.hex_view else text_cells(line)
        typed = self._typed.get(line.number)
        return cells + (len(typed) if typed else 0)

    @property
    def references(self) -> list[tuple[int, float]]:
        """Each boot's (first line number, reference time in s): where "elapsed" counts
        from."""
        return self._references

    def type_echo(self, text: str) -> None:
        """Local echo: show typed text after the line arriving (a backspace, DEL, takes the
        last typed character back); kept with that line once it is complete."""
        partial = self._incoming_partial if self._dirty else self._partial
        if partial is not None:
            number = partial.number
        elif self._incoming:
            number = self._incoming[-1].number + 1
        else:
            number = self._lines[-1].number + 1 if len(self._lines) else 1
        typed = self._typed.get(number, "")
        for char in text:
            typed = typed[:-1] if char in "\b\x7f" else typed + char
        self._typed[number] = typed
        self._cache.clear()
        if self.wrap:
            self._wrapped = Wrapped(self._cells)
            self._wrapped.extend(self._lines, self._body())
        self.virtual_size = self._virtual_size()
        self.refresh()

    @property
    def time_columns(self) -> int:
        """Columns of the time column now (none when it is off)."""
        return 0 if self.time_mode == "off" else GUTTER

    def _body(self) -> int:
        """Columns a line's text has beside the time column (and the scrollbar)."""
        return max(1, self.scrollable_content_region.width - self.time_columns)

    def _prune(self) -> int:
        excess = len(self._lines) - self.max_lines
        if excess <= 0:
            return 0
        self._before_t = self._lines.t_ns(excess - 1)
        self._lines.drop(excess)
        self._dropped += excess
        self._wrapped.drop(excess)
        if self._typed:
            first = self._lines[0].number
            self._typed = {n: t for n, t in self._typed.items() if n >= first}
        return excess

    def watch_hex_view(self) -> None:
        """Show the lines the other way (laid out again for its widths)."""
        self.watch_wrap()

    def watch_wrap(self) -> None:
        """Lay the lines out again, wrapped or cut, keeping the end in view if following."""
        self._wrapped = Wrapped(self._cells)
        if self.wrap:
            self._wrapped.extend(self._lines, self._body())
        self.scroll_to(x=0, animate=False, immediate=True)
        self.virtual_size = self._virtual_size()
        self._cache.clear()
        self.refresh()
        if self.following:
            self.call_after_refresh(self._keep_following)

    def action_follow(self) -> None:
        """Follow new lines again."""
        self.following = True

    def _keep_following(self) -> None:
        if self.following:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    def on_resize(self) -> None:
        """A pane that grows or shrinks (the phase pane filling up) keeps the end in view and
        rendered rows for CACHED_SCREENS of its new height."""
        rows = max(MIN_CACHED_ROWS, CACHED_SCREENS * self.size.height)
        if rows != self._cached_rows:
            self._cached_rows = rows
            self._cache = FIFOCache(rows)
        if self.wrap and self._wrapped.width != self._body():
            self.watch_wrap()
        if self.following:
            self.call_after_refresh(self._keep_following)

    def watch_show_horizontal_scrollbar(self) -> None:
        """The horizontal scrollbar appearing (a long line) takes a row: keep the end in
        view."""
        if self.following:
            self.call_after_refresh(self._keep_following)

    def watch_following(self, following: bool) -> None:
        """Jump to the end when following resumes."""
        if following:
            self.pending = 0
            self.call_after_refresh(self._keep_following)

    def watch_time_mode(self) -> None:
        """Redraw with the other time column (wrapped lines laid out for its width)."""
        if self.wrap:
            self.watch_wrap()
        self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolling back stops following; scrolling down to the end resumes it."""
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value and new_value < self.max_scroll_y:
            self.following = False
        elif new_value > old_value and new_value >= self.max_scroll_y:
            self.following = True

    def scroll_to_row(self, row: int) -> None:
        """Show a line (its row when not wrapped) in the middle of the pane (following
        stops)."""
        self.following = False
        if self.wrap:
            row = self._wrapped.first_row(row)
        self.scroll_to(y=max(0, row - self.size.height // 2), animate=False, immediate=True)

    def find(self, query: str, forward: bool = True) -> Found | None:
        """Highlight the next (or previous) line containing `query`, case-insensitively, and
        bring the match itself into view (scrolled sideways when it is past the pane's width).

        Searching starts after the current match, or from the top of the view, and wraps
        around the ends (`Found.wrapped` says when it did).

        Returns:
            Where the match is among all of them, or None when nothing matches.
        """
        needle = query.casefold()
        count = len(self._lines)
        if not needle or not count:
            return None
        texts = [clean(self._lines.raw(row)[:SHOWN_BYTES]).casefold() for row in range(count)]
        rows = [row for row, text in enumerate(texts) if needle in text]
        if not rows:
            return None
        current = self.match_row
        start = current if current is not None and 0 <= current < count \
            else int(self.scroll_y) - (1 if forward else 0)
        if forward:
            after = [row for row in rows if row > start]
            row, wrapped = (after[0], False) if after else (rows[0], True)
        else:
            before = [row for row in rows if row < start]
            row, wrapped = (before[-1], False) if before else (rows[-1], True)
        self._match = self._dropped + row
        self.scroll_to_row(row)
        column = texts[row].index(needle) * (3 if self.hex_view else 1)
        body = self._body()
        if not self.wrap and not self.scroll_x <= column <= self.scroll_x + body - len(needle):
            self.scroll_to(x=max(0, column - body // 3), animate=False, immediate=True)
        self.refresh()
        return Found(row, rows.index(row) + 1, len(rows), wrapped)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The rows in `crop`, with the pane's styles worked out once for all of them: they
        walk every ancestor's styles, and a flood redraws every row of the pane each frame."""
        self._current_styles()
        return super().render_lines(crop)

    def _current_styles(self) -> _Styles:
        """The pane's styles now; rendered rows are forgotten when they changed."""
        # Whole styles for the coloured parts: `auto` and translucent colours ($text-muted,
        # $accent 30%) are worked out only on a background (a partial style would draw them
        # opaque, and `auto` as white, whatever the theme).
        component = self.get_component_rich_style
        styles = _Styles(self.rich_style, component("logview--time"),
                         component("logview--match"),
                         component("logview--partial", partial=True),
                         component("logview--typed"))
        if styles != self._styles:
            self._styles = styles
            self._cache.clear()
        return styles

    def render_line(self, y: int) -> Strip:
        """One row on screen: the time column, then the line scrolled horizontally."""
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        styles = self._styles or self._current_styles()
        if row >= self.row_count:
            return Strip.blank(width, styles.base)
        if self.wrap:
            line, part = self._wrapped.locate(row, len(self._lines))
            gutter, text = self._row_strips(line, width, styles)
            columns = self._body()
            if part:
                gutter = Strip.blank(self.time_columns, styles.base)
            text = text.crop_extend(part * columns, (part + 1) * columns, styles.base)
            return Strip.join([gutter, text]).crop(0, width)
        gutter, text = self._row_strips(row, width, styles)
        body = text.crop_extend(scroll_x, scroll_x + max(0, width - self.time_columns), styles.base)
        return Strip.join([gutter, body]).crop(0, width)

    def _row_strips(self, row: int, width: int, styles: _Styles) -> tuple[Strip, Strip]:
        if row >= len(self._lines):
            assert self._partial is not None
            return self._render_row(self._partial, row, styles, partial=True)
        index = self._dropped + row
        generation = self._reference_generation if self.time_mode == "elapsed" else 0
        key = (index, width, self.time_mode, index == self._match, generation, self.hex_view)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._render_row(self._lines[row], row, styles, partial=False)
            self._cache.set(key, cached)
        return cached

    def _render_row(self, line: Line, row: int, styles: _Styles,
                    partial: bool) -> tuple[Strip, Strip]:
        shown = clean(line.raw[:SHOWN_BYTES], keep_sgr=True)
        if self.hex_view:
            text = Text(hex_text(line), style=styles.base, no_wrap=True, end="")
        else:
            text = Text.from_ansi(shown, style=styles.base, no_wrap=True, end="")
            text.expand_tabs()
        typed = self._typed.get(line.number)
        if typed:
            text.append(typed, styles.typed)
        if partial:
            text.stylize(styles.partial)
        elif self._dropped + row == self._match:
            text.stylize(styles.match)
        label = self._time_label(line, row, shown)
        gutter = Strip([], 0) if self.time_mode == "off" else \
            Strip([Segment(f"{label:>12.12} ", styles.time)], GUTTER)
        # Rich leaves a text without spans unstyled: the pane's colours go under every row,
        # or the terminal's own would show through.
        return gutter, Strip(text.render(self.app.console), text.cell_len).apply_style(
            styles.base)

    def _time_label(self, line: Line, row: int, shown: str) -> str:
        before = None
        if self.time_mode == "delta":
            before = self._lines.t_ns(row - 1) if row else self._before_t
        return time_label(self.time_mode, line, shown, before, self.epoch_s, self._references)
