"""The compare screen: boots or label groups side by side, the way `bootlab compare` sees them.

Three views of the same columns (`bootlab.core.analysis.compare`): the deltas table (median per
milestone, difference to the first column), the waterfall (every phase on one time axis) and
the statistics (n, median, min, max, standard deviation per group, and each group's difference
to the first with Welch's 95% confidence interval, in plain sentences). Reading and analysing
the sessions runs on a worker; the columns are rebuilt from its result when grouping or the
reference point changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from bootlab.core.analysis import compare
from bootlab.core.analysis.catalog import Comparison, read_runs
from bootlab.core.capture.session import iter_sessions
from bootlab.core.files.config import profile_dirs
from bootlab.ui.screens.help import KeyedScreen
from bootlab.ui.widgets.key_footer import KeyFooter
from bootlab.ui.widgets.table import LeanTable
from bootlab.ui.widgets.waterfall import Lane, Waterfall

FIRST_BYTE = "first-byte"
KERNEL = "starting_kernel"
"""The other reference point offered: times from `Starting kernel` (the kernel's share)."""
TABS = ("deltas", "waterfall", "statistics")


def _delta(value: float, base: float | None) -> str:
    return "" if base is None else f" {value - base:+.3f}"


NAME_WIDTH = 30
"""The row names' column at most: a long phase name is cut in its middle, so that the
columns of figures keep their room on an 80-column terminal."""


def _fit(name: str, width: int) -> str:
    """`name` in `width` cells, its middle cut (`phase:kernel_unc…starting_kernel`)."""
    if len(name) <= width:
        return name
    tail = (width - 1) // 2
    return name[:width - 1 - tail] + "…" + name[-tail:]


class CompareScreen(KeyedScreen):
    """Sessions or groups side by side."""

    HELP_TITLE = "Compare screen (F3)"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "show('deltas')", "Deltas", id="compare-deltas",
                tooltip="the deltas table"),
        Binding("2", "show('waterfall')", "Waterfall", id="compare-waterfall",
                tooltip="the phases on one time axis"),
        Binding("3", "show('statistics')", "Statistics", id="compare-statistics",
                tooltip="group statistics and confidence intervals"),
        Binding("g", "toggle_groups", "Groups", id="compare-groups",
                tooltip="boots sharing a label as one group, or one column per boot"),
        Binding("r", "toggle_reference", "Reference", id="compare-reference",
                tooltip="times from the first byte, or from Starting kernel"),
        Binding("escape", "back", "Back", id="back", tooltip="back to the screen before"),
        Binding("question_mark", "help", "Keys", id="help", tooltip="these keys"),
    ]

    @dataclass
    class Read(Message):
        """The worker's result."""

        comparison: Comparison

    def __init__(self, folder: Path, paths: Sequence[Path] | None = None) -> None:
        """Args:
            folder: the sessions folder (its profiles; every session in it without `paths`).
            paths: the sessions to compare.
        """
        super().__init__()
        self.folder = folder
        self.paths = list(paths) if paths is not None else None
        self.comparison: Comparison | None = None
        self.group = True
        self.reference: str | None = None
        """None: the profiles' own reference point."""
        self.columns: list[compare.Column] = []
        self.order: list[str] = []

    def compose(self) -> ComposeResult:
        """A title line, the three views in tabs, the keys."""
        yield Static("reading the sessions…", id="compare-title")
        with TabbedContent(initial="deltas"):
            with TabPane("Deltas (1)", id="deltas"):
                yield LeanTable(id="compare-table", cursor_type="row", zebra_stripes=True)
            with TabPane("Waterfall (2)", id="waterfall"), VerticalScroll(can_focus=True):
                yield Waterfall("compare-waterfall")
            with TabPane("Statistics (3)", id="statistics"), VerticalScroll(can_focus=True):
                yield Static(id="compare-statistics")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Start reading."""
        self.query_one("#compare-table", DataTable).focus()
        self._read(self.paths)

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare")
    def _read(self, paths: list[Path] | None) -> None:
        chosen = list(iter_sessions(self.folder)) if paths is None else paths
        comparison = read_runs(chosen, profile_dirs(self.folder))
        if not get_current_worker().is_cancelled:
            self.post_message(self.Read(comparison))

    def on_compare_screen_read(self, message: Read) -> None:
        """Build the columns and show them."""
        self.comparison = message.comparison
        if message.comparison.problems:
            self.notify("\n".join(message.comparison.problems) + "\nThe others are compared.",
                        title="compare", severity="warning", timeout=20, markup=False)
        self._rebuild()

    def _rebuild(self) -> None:
        comparison = self.comparison
        if comparison is None:
            return
        reference = self.reference or comparison.reference
        self.columns = comparison.columns(reference, self.group)
        self.order = compare.milestone_order(self.columns, comparison.order)
        self._title(reference)
        self._fill_table()
        timed = [m for m in self.order if compare.is_time(m)]
        self.query_one(Waterfall).show(timed, [  # milestones before the reference: left out
            Lane(self._heading(c), {m: s.median for m in timed
                                    if (s := c.summary(m)) is not None and s.median >= 0})
            for c in self.columns])
        self.query_one("#compare-statistics", Static).update(self._statistics())

    def _title(self, reference: str) -> None:
        runs = len(self.comparison.runs) if self.comparison else 0
        if not self.columns:
            text = "nothing to compare: no readable session"
        else:
            text = (f"{runs} boots in {len(self.columns)} columns"
                    f" ({'grouped by label' if self.group else 'one per boot'}) · times from "
                    f"{'the first byte' if reference == FIRST_BYTE else reference} · "
                    f"deltas against {self.columns[0].name}")
        self.query_one("#compare-title", Static).update(Text(text))

    @staticmethod
    def _heading(column: compare.Column) -> str:
        """A group's label and count, or one boot's file name without what every session's
        shares (the date before the time, the suffix): `020226-default-01`."""
        if column.boots > 1:
            return f"{column.name} ×{column.boots}"
        return re.sub(r"^\d{8}-|\.jsonl(?=#|$)|#1$", "", column.name)

    def _listed_rows(self) -> list[str]:
        """The rows the table lists: each unit's start-to-ready length is left to the
        sentences, which name those that changed."""
        return [m for m in self.order if not m.startswith(compare.TOOK)]

    def _fill_table(self) -> None:
        table: DataTable[Text] = self.query_one("#compare-table", DataTable)
        table.clear(columns=True)
        rows: list[list[Text]] = []
        listed = self._listed_rows()
        for milestone in listed:
            base = self.columns[0].summary(milestone)
            cells = [Text(_fit(milestone, NAME_WIDTH))]
            for index, column in enumerate(self.columns):
                summary = column.summary(milestone)
                if summary is None:
                    cells.append(Text("-", justify="right"))
                    continue
                shown = f"{summary.median:.3f}" + \
                    _delta(summary.median, base.median if index and base else None)
                cells.append(Text(shown, justify="right"))
            rows.append(cells)
        # Widths given, not measured later by the table: the columns are right at once.
        headings = ["milestone", *(self._heading(column) for column in self.columns)]
        for index, heading in enumerate(headings):
            width = max([len(heading), *(row[index].cell_len for row in rows)])
            table.add_column(heading, key="milestone" if index == 0 else str(index - 1),
                             width=width)
        for milestone, cells in zip(listed, rows, strict=True):
            table.add_row(*cells, key=milestone)

    def _statistics(self) -> Table | Text:
        if not self.columns:
            return Text("nothing to compare")
        table = Table(box=None, padding=(0, 1), show_edge=False, expand=False)
        table.add_column("milestone / column", no_wrap=True, overflow="ellipsis", max_width=24)
        for heading in ("n", "median", "min", "max", "sd"):
            table.add_column(heading, justify="right", no_wrap=True)
        for milestone in self._listed_rows():
            table.add_row(Text(milestone, style="bold"))
            for column in self.columns:
                s = column.summary(milestone)
                if s is not None:
                    table.add_row(f"  {self._heading(column)}", str(s.n), f"{s.median:.3f}",
                                  f"{s.min:.3f}", f"{s.max:.3f}",
                                  "-" if s.stdev is None else f"{s.stdev:.3f}")
        said = compare.sentences(self.columns, self.order)
        notes = Table.grid(padding=(0, 0))
        notes.add_column(width=2)
        notes.add_column()
        if said:
            notes.add_row(None, Text(f"Against {self.columns[0].name} (difference of the "
                                     f"means, {compare.LEVEL * 100:g}% confidence interval, "
                                     "Welch):", style="bold"))
            for sentence in said:
                notes.add_row("", Text(sentence))
        else:
            notes.add_row(None, Text("No confidence intervals: they need two boots or more in "
                                     "the first column and in another (record more boots "
                                     "with the same label, or press g to group by label).",
                                     style="italic"))
        notes.add_row("", "")
        notes.add_row(None, table)
        return notes

    def action_show(self, tab: str) -> None:
        """Show one of the views."""
        if tab in TABS:
            self.query_one(TabbedContent).active = tab
            self.query_one(f"#{tab}", TabPane).query("DataTable, VerticalScroll").first().focus()

    def action_toggle_groups(self) -> None:
        """Group boots by label, or show one column per boot."""
        self.group = not self.group
        self._rebuild()

    def action_toggle_reference(self) -> None:
        """Times from the profile's reference point, or from Starting kernel."""
        own = self.comparison.reference if self.comparison else FIRST_BYTE
        current = self.reference or own
        self.reference = KERNEL if current != KERNEL else (own if own != KERNEL else FIRST_BYTE)
        self._rebuild()

    def action_back(self) -> None:
        """Back to the screen before."""
        self.app.pop_screen()

    def system_commands(self) -> list[SystemCommand]:
        """This screen's commands for the palette."""
        return [
            SystemCommand("compare: Deltas table", "median per milestone, delta to the first",
                          lambda: self.action_show("deltas")),
            SystemCommand("compare: Waterfall", "the phases on one time axis",
                          lambda: self.action_show("waterfall")),
            SystemCommand("compare: Statistics", "groups with 95% confidence intervals",
                          lambda: self.action_show("statistics")),
            SystemCommand("compare: Group by label or not", "one column per label or per boot",
                          self.action_toggle_groups),
            SystemCommand("compare: Change the reference point",
                          "times from the first byte or from Starting kernel",
                          self.action_toggle_reference),
        ]
