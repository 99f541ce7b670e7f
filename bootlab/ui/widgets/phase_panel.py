"""The phase pane: each milestone reached, its times, and a bar per phase on one time axis.

Rows are diffed, not rebuilt: a batch adds the milestones that are new, removes those that
moved or belong to an earlier boot, and updates only the cells whose text changed. The last
phase is still running: its bar and duration grow with the clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from bootlab.core.phases import PhaseRow

EIGHTHS = " ▏▎▍▌▋▊▉█"
COLUMNS = (("milestone", "milestone", 15), ("elapsed", "elapsed", 7), ("delta", "Δ", 7),
           ("duration", "dur", 6))
"""(key, label, width) of the columns before the bar."""
NARROW_COLUMNS = tuple(c for c in COLUMNS if c[0] != "delta")
"""Below WITH_DELTA columns the delta (elapsed minus the previous elapsed) is left out."""
WITH_DELTA = 54
MIN_BAR = 6


def bar(start_s: float, end_s: float, total_s: float, width: int) -> str:
    """A bar from `start_s` to `end_s` on an axis of `total_s` seconds, `width` cells wide.

    It starts at the cell holding `start_s` and ends in eighths of a cell; a phase too short
    to see still gets one eighth.
    """
    if total_s <= 0 or width <= 0:
        return " " * max(width, 0)
    scale = width / total_s
    first = min(width - 1, max(0, int(start_s * scale)))
    eighths = max(1, round((min(end_s, total_s) * scale - first) * 8))
    eighths = min(eighths, (width - first) * 8)
    full, rest = divmod(eighths, 8)
    cells = " " * first + "█" * full + (EIGHTHS[rest] if rest else "")
    return cells.ljust(width)


def _seconds(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


class PhasePanel(DataTable[Text]):
    """The milestones of the boot being received, with phase bars."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"phasepanel--bar", "phasepanel--running",
                                             "phasepanel--fail"}
    DEFAULT_CSS = """
    PhasePanel {
        & > .phasepanel--bar { color: $primary; }
        & > .phasepanel--running { color: $accent; }
        & > .phasepanel--fail { color: $error; text-style: bold; }
    }
    """

    @dataclass
    class Chosen(Message):
        """Enter on a milestone: show its line (1-based line number in the stream)."""

        line: int

    def __init__(self) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False)
        self._rows: list[PhaseRow] = []
        self._now_s: float | None = None
        self._shown: dict[str, tuple[dict[str, str], str]] = {}
        """Row key -> the cell texts (by column) and the bar's style class shown."""
        self._lines: dict[str, int] = {}
        self._layout: tuple[tuple[tuple[str, str, int], ...], int] = (NARROW_COLUMNS, MIN_BAR)
        """The columns before the bar, and the bar's width."""

    def on_mount(self) -> None:
        """Create the columns."""
        self._add_columns()

    def _add_columns(self) -> None:
        columns, bar_width = self._layout
        for key, label, width in columns:
            self.add_column(label, key=key, width=width)
        self.add_column("phase", key="bar", width=bar_width)

    def on_resize(self) -> None:
        """Fit the columns and bars to the width (the only time the table is rebuilt)."""
        # The vertical scrollbar's room is kept whether it shows or not, so rows never jitter.
        available = self.size.width - self.styles.scrollbar_size_vertical
        columns = COLUMNS if available >= WITH_DELTA else NARROW_COLUMNS
        fixed = sum(width + 2 * self.cell_padding for _, _, width in columns)
        layout = (columns, max(MIN_BAR, available - fixed - 2 * self.cell_padding))
        if layout != self._layout:
            self._layout = layout
            self.clear(columns=True)
            self._shown.clear()
            self._add_columns()
            self._apply()

    def show(self, rows: list[PhaseRow], now_s: float | None) -> None:
        """Show these rows; `now_s` (elapsed time now) lets the last phase grow."""
        self._rows = rows
        self._now_s = now_s
        self._apply()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row: ask for its line to be shown."""
        event.stop()
        line = self._lines.get(str(event.row_key.value))
        if line is not None:
            self.post_message(self.Chosen(line))

    def _apply(self) -> None:
        columns, bar_width = self._layout
        keys = [key for key, _, _ in columns] + ["bar"]
        wanted: dict[str, tuple[dict[str, str], str]] = {}
        ends = [r.elapsed_s + (r.duration_s or 0.0) for r in self._rows
                if r.elapsed_s is not None]
        last = self._rows[-1].elapsed_s if self._rows else None
        now = self._now_s
        running = now is not None and last is not None and now > last
        total = max([*ends, now if running and now is not None else 0.0], default=0.0)
        for index, row in enumerate(self._rows):
            m = row.milestone
            key = f"{m.boot}:{m.id}:{m.line}"
            self._lines[key] = m.line
            is_running = running and index == len(self._rows) - 1
            start, duration = row.elapsed_s, row.duration_s
            if is_running and start is not None and now is not None:
                duration = now - start
            cells = {
                "milestone": m.id + ("*" if m.fallback else ""),
                "elapsed": _seconds(start),
                "delta": _seconds(row.delta_s, signed=True),
                "duration": _seconds(duration),
                "bar": " " * bar_width if start is None else
                bar(start, start + (duration or 0.0), total, bar_width),
            }
            style = "phasepanel--fail" if m.fail else \
                "phasepanel--running" if is_running else "phasepanel--bar"
            wanted[key] = ({k: cells[k] for k in keys}, style)
        for key in [k for k in self._shown if k not in wanted]:
            self.remove_row(key)
            del self._shown[key]
            self._lines.pop(key, None)
        for key, (cells, style) in wanted.items():
            shown = self._shown.get(key)
            if shown is None:
                self.add_row(*(self._cell(k, cells[k], style) for k in keys), key=key)
            else:
                for column in keys:
                    if shown[1] != style or shown[0][column] != cells[column]:
                        self.update_cell(key, column, self._cell(column, cells[column], style))
            self._shown[key] = (cells, style)

    def _cell(self, column: str, value: str, style_class: str) -> Text:
        style = self.get_component_rich_style(style_class, partial=True)
        if column == "bar":
            return Text(value, style=style, no_wrap=True)
        if column == "milestone":
            return Text(value, style=style if style_class == "phasepanel--fail" else "",
                        overflow="ellipsis", no_wrap=True)
        return Text(value, justify="right")
