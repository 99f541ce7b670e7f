"""The sessions table: one row per session file with its marks, date, label, board, total
and key milestones. The sessions screen owns the summaries and the marks and hands them down."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from rich.text import Text

from bootlab.core.analysis.catalog import KEY_MILESTONES, SessionSummary
from bootlab.ui.widgets.table import LeanTable

COLUMNS = (("flags", "", 2), ("date", "date", 14), ("label", "label", 12),
           ("board", "board", 10), ("total", "total", 6), ("starting_kernel", "kernel", 6),
           ("init", "init", 6), ("login", "login", 6))
"""(key, heading, width) of the columns; the milestone ones are KEY_MILESTONES. The label and
board columns are at least this wide, and grow to their longest text where there is room."""
GROWN = {"label": 32, "board": 28}
"""How wide the label and board columns may grow."""


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _date(summary: SessionSummary) -> str:
    if summary.started_s is None:
        return "?"
    return datetime.fromtimestamp(summary.started_s).strftime("%m-%d %H:%M:%S")


def cells(summary: SessionSummary, marked: bool, baseline: bool) -> list[Text]:
    """A session's row: `✓` when marked and `B` for the baseline, then its figures."""
    flags = Text(("✓" if marked else " ") + ("B" if baseline else " "), style="bold")
    if summary.error is not None:
        return [flags, Text("?"), Text("unreadable", style="bold"), Text(""),
                *(Text("-", justify="right") for _ in range(1 + len(KEY_MILESTONES)))]
    return [flags, Text(_date(summary)),
            Text(summary.label or "-", overflow="ellipsis", no_wrap=True),
            Text(summary.board or "-", overflow="ellipsis", no_wrap=True),
            Text("gap", justify="right", style="bold") if summary.incomplete else
            Text(_seconds(summary.total_s), justify="right", style="bold"),
            *(Text(_seconds(summary.milestones.get(m)), justify="right")
              for m in KEY_MILESTONES)]


class SessionList(LeanTable):
    """Sessions, one row each, keyed by their path."""

    def __init__(self, widget_id: str | None = None) -> None:
        super().__init__(id=widget_id, cursor_type="row", zebra_stripes=True)
        self._widths: dict[str, int] = {}
        self._summaries: Sequence[SessionSummary] = ()
        self._marks: tuple[set[Path], Path | None] = (set(), None)

    def on_mount(self) -> None:
        """The columns."""
        self._columns(self._wanted(()))

    def on_resize(self) -> None:
        """Label and board columns as wide as the room and their texts allow."""
        if self._wanted(self._summaries) != self._widths:
            self._columns(self._wanted(self._summaries))
            self.show(self._summaries, *self._marks)

    def _wanted(self, summaries: Sequence[SessionSummary]) -> dict[str, int]:
        """Each column's width: label and board grown to their texts, within the room."""
        widths = {key: width for key, _, width in COLUMNS}
        spare = self.size.width - sum(widths.values()) - 2 * self.cell_padding * len(widths) \
            - self.styles.scrollbar_size_vertical
        for key, most in GROWN.items():
            longest = max((len(getattr(s, key) or "") for s in summaries), default=0)
            grow = max(0, min(longest, most) - widths[key])
            grow = min(grow, max(0, spare))
            widths[key] += grow
            spare -= grow
        return widths

    def _columns(self, widths: dict[str, int]) -> None:
        self._widths = widths
        self.clear(columns=True)
        for key, heading, _ in COLUMNS:
            self.add_column(heading, key=key, width=widths[key])

    def show(self, summaries: Sequence[SessionSummary], marked: set[Path],
             baseline: Path | None) -> None:
        """Show these sessions in this order, the cursor staying on the same one."""
        self._summaries, self._marks = summaries, (marked, baseline)
        if self._wanted(summaries) != self._widths:
            self._columns(self._wanted(summaries))
        current = self.current()
        self.clear()
        for summary in summaries:
            self.add_row(*cells(summary, summary.path in marked, summary.path == baseline),
                         key=str(summary.path))
        if current is not None and str(current) in self.rows:
            self.move_cursor(row=self.get_row_index(str(current)))

    def update(self, summary: SessionSummary, marked: bool, baseline: bool) -> None:
        """Show a session's row anew (a mark, the baseline or its label changed)."""
        key = str(summary.path)
        if key in self.rows:
            for (column, _, _), cell in zip(COLUMNS, cells(summary, marked, baseline),
                                            strict=True):
                self.update_cell(key, column, cell)

    def current(self) -> Path | None:
        """The session under the cursor."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return Path(key) if key is not None else None
