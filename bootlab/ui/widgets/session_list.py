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
"""(key, heading, width) of the columns; the milestone ones are KEY_MILESTONES."""


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

    def on_mount(self) -> None:
        """The columns."""
        for key, heading, width in COLUMNS:
            self.add_column(heading, key=key, width=width)

    def show(self, summaries: Sequence[SessionSummary], marked: set[Path],
             baseline: Path | None) -> None:
        """Show these sessions in this order, the cursor staying on the same one."""
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
