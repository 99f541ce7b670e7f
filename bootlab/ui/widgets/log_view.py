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
from collections.abc import Sequence
from datetime import datetime
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

from bootlab.core.capture.lines import Line
from bootlab.core.capture.stamps import parse_stamp
from bootlab.core.capture.text import clean
from bootlab.ui.widgets.line_store import SCROLLBACK_LINES, LineStore

TIME_MODES = ("elapsed", "delta", "wall", "kernel")
"""Time column: since the boot's reference point, since the previous line, the wall clock,
the kernel's printk time."""
TIME_TITLES = {"elapsed": "elapsed", "delta": "delta", "wall": "clock", "kernel": "printk"}
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


class LogView(ScrollView, can_focus=True):
    """Received lines with their times; follows new lines until scrolled back."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"logview--time", "logview--match",
                                             "logview--partial"}
    DEFAULT_CSS = """
    LogView {
        background: $surface;
        color: $foreground;
        overflow-x: auto;
        overflow-y: scroll;
        & > .logview--time { color: $text-muted; }
        & > .logview--match { background: $accent 45%; text-style: bold; }
        & > .logview--partial { text-style: underline; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("end", "follow", "Follow", id="follow")]

    following: var[bool] = var(True)
    """New lines scroll into view; scrolling back turns this off, End turns it on."""
    time_mode: var[str] = var("elapsed")
    """One of TIME_MODES."""
    pending: var[int] = var(0)
    """Lines that arrived while not following."""

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
        self._width = GUTTER
        self._references: list[tuple[int, float]] = []
        """(first line number of a boot, its reference time in s), ascending."""
        self._reference_generation = 0
        self._match: int | None = None
        """Absolute index of the highlighted search match."""
        self._styles: _Styles | None = None
        """What the cached rows were rendered with."""
        self._cache: FIFOCache[tuple[int, int, str, bool, int], tuple[Strip, Strip]] = \
            FIFOCache(MIN_CACHED_ROWS)
        self._cached_rows = MIN_CACHED_ROWS

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
        self._width = GUTTER
        self._references = []
        self._cache.clear()
        self._dirty = False
        self.pending = 0
        self.virtual_size = Size(self._width, 0)
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
            self._width = max(self._width, GUTTER + min(longest, SHOWN_BYTES))
        pruned = self._prune()
        self.virtual_size = Size(self._width, self.row_count)
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
        """Rows shown: the lines and the partial line."""
        return len(self._lines) + (self._partial is not None)

    def _prune(self) -> int:
        excess = len(self._lines) - self.max_lines
        if excess <= 0:
            return 0
        self._before_t = self._lines.t_ns(excess - 1)
        self._lines.drop(excess)
        self._dropped += excess
        return excess

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
        """Redraw with the other time column."""
        self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolling back stops following; scrolling down to the end resumes it."""
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value and new_value < self.max_scroll_y:
            self.following = False
        elif new_value > old_value and new_value >= self.max_scroll_y:
            self.following = True

    def scroll_to_row(self, row: int) -> None:
        """Show a row in the middle of the pane (following stops)."""
        self.following = False
        self.scroll_to(y=max(0, row - self.size.height // 2), animate=False, immediate=True)

    def find(self, query: str, forward: bool = True) -> int | None:
        """Highlight the next (or previous) line containing `query`, case-insensitively.

        Searching starts after the current match, or from the top of the view, and wraps.

        Returns:
            The row found, or None.
        """
        needle = query.casefold()
        count = len(self._lines)
        if not needle or not count:
            return None
        current = self.match_row
        start = current if current is not None and 0 <= current < count \
            else int(self.scroll_y) - (1 if forward else 0)
        step = 1 if forward else -1
        for offset in range(1, count + 1):
            row = (start + step * offset) % count
            if needle in clean(self._lines.raw(row)[:SHOWN_BYTES]).casefold():
                self._match = self._dropped + row
                self.scroll_to_row(row)
                self.refresh()
                return row
        return None

    def render_lines(self, crop: Region) -> list[Strip]:
        """The rows in `crop`, with the pane's styles worked out once for all of them: they
        walk every ancestor's styles, and a flood redraws every row of the pane each frame."""
        self._current_styles()
        return super().render_lines(crop)

    def _current_styles(self) -> _Styles:
        """The pane's styles now; rendered rows are forgotten when they changed."""
        component = self.get_component_rich_style
        styles = _Styles(self.rich_style, component("logview--time", partial=True),
                         component("logview--match", partial=True),
                         component("logview--partial", partial=True))
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
        gutter, text = self._row_strips(row, width, styles)
        body = text.crop_extend(scroll_x, scroll_x + max(0, width - GUTTER), styles.base)
        return Strip.join([gutter, body]).crop(0, width)

    def _row_strips(self, row: int, width: int, styles: _Styles) -> tuple[Strip, Strip]:
        if row >= len(self._lines):
            assert self._partial is not None
            return self._render_row(self._partial, row, styles, partial=True)
        index = self._dropped + row
        generation = self._reference_generation if self.time_mode == "elapsed" else 0
        key = (index, width, self.time_mode, index == self._match, generation)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._render_row(self._lines[row], row, styles, partial=False)
            self._cache.set(key, cached)
        return cached

    def _render_row(self, line: Line, row: int, styles: _Styles,
                    partial: bool) -> tuple[Strip, Strip]:
        shown = clean(line.raw[:SHOWN_BYTES], keep_sgr=True)
        text = Text.from_ansi(shown, style=styles.base, no_wrap=True, end="")
        text.expand_tabs()
        if partial:
            text.stylize(styles.partial)
        elif self._dropped + row == self._match:
            text.stylize(styles.match)
        label = self._time_label(line, row, shown)
        gutter = Strip([Segment(f"{label:>12.12} ", styles.base + styles.time)], GUTTER)
        return gutter, Strip(text.render(self.app.console), text.cell_len)

    def _time_label(self, line: Line, row: int, shown: str) -> str:
        mode = self.time_mode
        if mode == "kernel":
            kernel_s = parse_stamp(shown).kernel_s
            return "" if kernel_s is None else f"{kernel_s:.6f}"
        if line.t_ns is None:
            return ""
        t_s = line.t_ns / 1e9
        if mode == "wall":
            if self.epoch_s is None:
                return ""
            return datetime.fromtimestamp(self.epoch_s + t_s).strftime("%H:%M:%S.%f")[:12]
        if mode == "delta":
            before = self._lines.t_ns(row - 1) if row else self._before_t
            return "" if before is None else f"{(line.t_ns - before) / 1e9:+.6f}"
        at = bisect_right(self._references, (line.number, float("inf"))) - 1
        zero = self._references[at][1] if at >= 0 else 0.0
        return f"{t_s - zero:.6f}"

