"""The phase pane: each milestone reached, its times, and a bar per phase on one time axis.

Rows are diffed, not rebuilt: a batch adds the milestones that are new, removes those that
moved or belong to an earlier boot, and updates only the cells whose text changed. The last
phase is still running: its bar and duration grow with the clock.

Beside a milestone's own times the pane shows, when there is one, its difference to the
baseline session (`-0.120` faster, `+0.340` slower: the sign says it without colour) and its
budget (`✓` within, `✗` missed, `·` not reached yet, with a `│` tick on the bar axis at the
limit when it fits). A budgeted milestone that has not come by its limit gets a `✗` row of its
own while the boot is still running. The goal's row (the first milestone of the boot's goal
reached; each of them, when the goal is each of several) is bold and ends in `◎`. When the
boot's first line is already the bootloader's or the kernel's, the pane's lower border says
the firmware before it printed nothing and is not timed (not a zero-length phase). A
milestone placed by a fallback rule ends in `*`; one read from the board's dmesg after the
goal (`--collect`) is marked as the command line's tables mark it (`linux (dmesg)`), and
Enter on it shows no console line (its line is dmesg's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.message import Message
from textual.theme import Theme
from textual.widgets import DataTable

from bootlab.core.analysis.phases import Milestone, PhaseRow
from bootlab.core.render.tables import shown_name
from bootlab.session.phase_marks import BudgetMark, PhaseMarks
from bootlab.ui.contrast import readable
from bootlab.ui.widgets.table import LeanTable

EIGHTHS = " ▏▎▍▌▋▊▉█"
TICK = "│"
COLUMNS = (("milestone", "milestone", 15), ("elapsed", "elapsed", 7), ("budget", "≤", 1),
           ("delta", "Δ", 7), ("base", "vs base", 7), ("duration", "dur", 6))
"""(key, label, width) of the columns before the bar, in order."""
OPTIONAL = {"budget": "budgets", "base": "baseline"}
"""Columns shown only when there is something to show: budgets, a baseline."""
DROPPED_FIRST = ("delta", "duration")
"""On narrow panes these columns go, in this order, until the bar is WANT_BAR wide."""
WANT_BAR = 9
MIN_BAR = 6
NARROWEST_MILESTONE = 11
"""Still short of MIN_BAR, the milestone column narrows down to this (ids get an ellipsis)."""
SHORTEST_ID = 4
"""A milestone id cut to make room for its marks keeps this many cells (its ellipsis too)."""
MARK_HEAD = 7
"""Cells of a milestone's marks kept when they do not fit whole: ` (dmesg`."""
BUDGET_GLYPHS = {"pass": "✓", "fail": "✗", "open": "·"}
BUDGET_STYLES = {"pass": "phasepanel--pass", "fail": "phasepanel--over",
                 "open": "phasepanel--open"}
SAME = 0.0005
"""Differences to the baseline below this (0.000 s when shown) are neither better nor worse."""

TEXT_CONTRAST = 5.0
"""Contrast the coloured marks keep on the pane: WCAG's 4.5 for text, and room for the tint
of the focused pane ($foreground 5%)."""

GOAL_MARK = "◎"
"""Ends the milestone cell of the goal's row."""

BUDGET_ROW = "budget:"
USER_SPACE_ROW = "userspace"
"""The folded row of user space; its units' rows are keyed `UNIT_ROW` + name."""
UNIT_ROW = "unit-row:"
UnitRow = tuple[str, float | None, float | None]
"""A unit of user space as the pane shows it: its name, began and ready (seconds from the
boot's reference point)."""
"""Key prefix of the rows of budgeted milestones not reached in time."""

Cell = tuple[str, str]
"""A cell's text and its own style class ("" for the row's)."""


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


def with_tick(cells: str, limit_s: float, total_s: float) -> str:
    """The bar with a tick at `limit_s` on the same axis, when the limit lies on it."""
    width = len(cells)
    if total_s <= 0 or not 0 <= limit_s <= total_s or not width:
        return cells
    at = min(width - 1, int(limit_s * width / total_s))
    return cells[:at] + TICK + cells[at + 1:]


def _seconds(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def name_marks(milestone: Milestone) -> str:
    """What follows a milestone's id in the pane: `*` when a fallback rule placed it; when
    another source than the console showed it, the command line's mark (`tables.shown_name`:
    ` (dmesg)`)."""
    if milestone.source == "console":
        return "*" if milestone.fallback else ""
    return shown_name(milestone).removeprefix(milestone.id)


def fitted_name(name: str, marks: str, width: int, goal: str = "") -> str:
    """A milestone's id, its marks and the goal's mark in `width` cells: what does not fit
    goes from the end of the marks first (down to `MARK_HEAD`: `calibrate (dmesg…`), then
    from the id's (down to `SHORTEST_ID`); the goal's mark stays."""
    if len(name) + len(marks) + len(goal) <= width:
        return name + marks + goal
    if len(marks) > MARK_HEAD:
        marks = marks[:MARK_HEAD] + "…"
    room = width - len(marks) - len(goal)
    if len(name) > room:
        name = name[:max(room, SHORTEST_ID) - 1] + "…"
    return name + marks + goal


def baseline_cell(elapsed_s: float | None, baseline_s: float | None) -> Cell:
    """This boot's time against the baseline's: faster is better, slower worse."""
    if elapsed_s is None or baseline_s is None:
        return "-", ""
    difference = elapsed_s - baseline_s
    if abs(difference) < SAME:
        return "±0.000", ""
    return f"{difference:+.3f}", "phasepanel--better" if difference < 0 else "phasepanel--worse"


class PhasePanel(LeanTable):
    """The milestones of the boot being received, with phase bars."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "phasepanel--bar", "phasepanel--running", "phasepanel--fail", "phasepanel--better",
        "phasepanel--worse", "phasepanel--pass", "phasepanel--over", "phasepanel--open",
        "phasepanel--goal"}
    DEFAULT_CSS = """
    PhasePanel {
        color: $text;
        & > .datatable--header { color: $text; }
        /* The cursor's row on a tint of $primary, as Textual draws it unfocused: its solid
           $primary is too close to black and white alike for text in some themes. */
        & > .datatable--cursor { color: $text; }
        &:focus > .datatable--cursor {
            background: $block-cursor-blurred-background; color: $text; text-style: bold;
        }
        & > .phasepanel--bar { color: $primary; }
        & > .phasepanel--running { color: $accent; }
        & > .phasepanel--fail { color: $text-error; text-style: bold; }
        & > .phasepanel--better { color: $text-success; }
        & > .phasepanel--worse { color: $text-error; }
        & > .phasepanel--pass { color: $text-success; }
        & > .phasepanel--over { color: $text-error; text-style: bold; }
        & > .phasepanel--open { color: $text-muted; }
        & > .phasepanel--goal { text-style: bold; }
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
        self._marks = PhaseMarks()
        self._shown: dict[str, tuple[dict[str, Cell], str]] = {}
        """Row key -> the cells shown (by column) and the row's style class."""
        self._lines: dict[str, int] = {}
        self._layout: tuple[tuple[tuple[str, str, int], ...], int] = ((), MIN_BAR)
        """The columns before the bar, and the bar's width."""
        self._units: list[UnitRow] = []
        self.units_open = False
        """Whether user space is unfolded (Enter on its row)."""

    def on_mount(self) -> None:
        """Create the columns; a new theme recolours the cells."""
        self._fit()
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    def _recolour(self, _theme: Theme) -> None:
        """Make every cell again: a cell holds the colours of the theme it was made in."""
        keys = [key for key, _, _ in self._layout[0]] + ["bar"]
        for key, (cells, style) in self._shown.items():
            for column in keys:
                self.update_cell(key, column, self._cell(column, cells[column], style))

    def _style(self, name: str) -> Style:
        """A component class's style for a cell: partial (the cursor's row keeps its own
        background), with its colour worked out on the pane's background (`auto` and
        translucent colours, $text-muted, need one: a partial style draws them opaque) and
        made readable there (a theme's $text-success can be too pale on its light surface)."""
        style = self.get_component_rich_style(name, partial=True)
        whole = self.get_component_rich_style(name)
        if style.color is None or whole.color is None:
            return style
        colour, ground = whole.color, whole.bgcolor
        if colour.triplet and ground and ground.triplet:  # not an ANSI theme's
            colour = readable(Color.from_rich_color(colour), Color.from_rich_color(ground),
                              TEXT_CONTRAST).rich_color
        return style + Style(color=colour)

    def on_resize(self) -> None:
        """Fit the columns and bars to the width; keep the newest row shown."""
        self._fit()
        self._keep_following()

    def watch_show_horizontal_scrollbar(self, show: bool) -> None:
        """A horizontal bar that appears takes a row from the view: keep the newest row
        shown (the goal's row at the end of a boot was left one line below the pane)."""
        if show:
            self._keep_following()

    def _keep_following(self) -> None:
        """With the cursor on the newest row (the pane following the boot), scroll it into
        view again once the layout has settled."""
        if self.row_count and self.cursor_row >= self.row_count - 1:
            self.call_after_refresh(self.move_cursor, row=self.cursor_row, animate=False)

    def _fit(self) -> None:
        """Choose the columns for the width and what there is to show; the table is rebuilt
        only when they change."""
        # The vertical scrollbar's room is kept whether it shows or not, so rows never jitter.
        available = self.size.width - self.styles.scrollbar_size_vertical
        present = {"budgets": bool(self._marks.budgets),
                   "baseline": self._marks.baseline_s is not None}
        columns = [c for c in COLUMNS if c[0] not in OPTIONAL or present[OPTIONAL[c[0]]]]
        padding = 2 * self.cell_padding

        def bar_width() -> int:
            return available - sum(width + padding for _, _, width in columns) - padding

        for dropped in DROPPED_FIRST:
            if bar_width() >= WANT_BAR:
                break
            columns = [c for c in columns if c[0] != dropped]
        key, label, width = columns[0]
        narrower = min(max(0, MIN_BAR - bar_width()), width - NARROWEST_MILESTONE)
        # Room to spare: the milestone column grows to its longest name (down to the bar's
        # least width: a name cut is worse than a shorter bar), so no name is cut where the
        # pane could show it whole.
        wider = max(0, min(self._name_width() - width, bar_width() - MIN_BAR))
        columns[0] = (key, label, width - narrower + wider)
        layout = (tuple(columns), max(MIN_BAR, bar_width()))
        if layout != self._layout:
            self._layout = layout
            self.clear(columns=True)
            self._shown.clear()
            for key, label, width in columns:
                self.add_column(label, key=key, width=width)
            self.add_column("phase", key="bar", width=layout[1])
            self._apply()

    def _name_width(self) -> int:
        """The widest milestone cell the rows need (with its marks, the goal's mark; user
        space's row, and its units' when unfolded)."""
        goal = len(f" {GOAL_MARK}")
        widths = [len(row.milestone.id) + len(name_marks(row.milestone))
                  + (goal if row.milestone.id in self._marks.goal else 0) for row in self._rows]
        if self._units:  # user space's row, and its units' when unfolded
            widths.append(len(self._folded_label()))
            widths += [len(f"  {name}") for name, _, _ in self._units if self.units_open]
        return max(widths, default=0)

    def _folded_label(self) -> str:
        """User space's own row: folded or not, and how many units it holds."""
        return ("▾" if self.units_open else "▸") + f" user space ({len(self._units)})"

    def show(self, rows: list[PhaseRow], now_s: float | None,
             marks: PhaseMarks | None = None, units: list[UnitRow] | None = None) -> None:
        """Show these rows; `now_s` (elapsed time now) lets the last phase grow; `marks`
        adds the baseline differences and budget marks; `units`, user space folded under
        them (the critical chain, or the slowest units)."""
        names = self._name_width()
        self._rows = rows
        self._now_s = now_s
        self._units = units or []
        marks = marks or PhaseMarks()
        if marks != self._marks or self._name_width() > names:
            self._marks = marks
            self.border_subtitle = " · ".join(filter(None, (
                f"vs {marks.baseline_name}" if marks.baseline_name else "", marks.note)))
            self._fit()
        self._apply()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row: ask for its line to be shown; on user space's, fold or unfold."""
        event.stop()
        if event.row_key.value == USER_SPACE_ROW:
            self.units_open = not self.units_open
            self._fit()  # the units' names may want a wider column
            self._apply()  # the cursor stays on the folded row, not on the last unit added
            self.move_cursor(row=self.get_row_index(USER_SPACE_ROW), animate=False)
            return
        line = self._lines.get(str(event.row_key.value))
        if line is not None:
            self.post_message(self.Chosen(line))

    def _apply(self) -> None:
        columns, bar_width = self._layout
        if not columns:
            return
        keys = [key for key, _, _ in columns] + ["bar"]
        wanted: dict[str, tuple[dict[str, Cell], str]] = {}
        ends = [r.elapsed_s + (r.duration_s or 0.0) for r in self._rows
                if r.elapsed_s is not None]
        last = self._rows[-1].elapsed_s if self._rows else None
        now = self._now_s
        running = now is not None and last is not None and now > last
        total = max([*ends, now if running and now is not None else 0.0,
                     *(ready for _, _, ready in self._units if ready is not None)],
                    default=0.0)
        budgets, baseline = self._marks.budgets, self._marks.baseline_s or {}
        goal_ids, marked = self._marks.goal, set[str]()
        name_width = columns[0][2]
        first_rows: set[str] = set()
        for index, row in enumerate(self._rows):
            m = row.milestone
            if m.source == "console":
                key = f"{m.boot}:{m.id}:{m.line}"
                self._lines[key] = m.line
            else:  # its line is the other source's (dmesg's): no console line to show
                key = f"{m.boot}:{m.id}:{m.source}:{m.line}"
            first = m.id not in first_rows
            first_rows.add(m.id)
            is_running = running and index == len(self._rows) - 1
            start, duration = row.elapsed_s, row.duration_s
            if is_running and start is not None and now is not None:
                duration = now - start
            bar_text = " " * bar_width if start is None else \
                bar(start, start + (duration or 0.0), total, bar_width)
            budget = budgets.get(m.id) if first else None
            is_goal = m.id in goal_ids and m.id not in marked \
                and (self._marks.goal_every or not marked)
            if is_goal:
                marked.add(m.id)
            name = fitted_name(m.id, name_marks(m), name_width,
                               f" {GOAL_MARK}" if is_goal else "")
            cells: dict[str, Cell] = {
                "milestone": (name, "phasepanel--goal" if is_goal else ""),
                "elapsed": (_seconds(start), ""),
                "budget": self._budget_cell(budget),
                "delta": (_seconds(row.delta_s, signed=True), ""),
                "base": baseline_cell(start, baseline.get(m.id)) if first else ("", ""),
                "duration": (_seconds(duration), ""),
                "bar": self._bar_cell(bar_text, budget, total),
            }
            style = "phasepanel--fail" if m.fail else \
                "phasepanel--running" if is_running else "phasepanel--bar"
            wanted[key] = ({k: cells[k] for k in keys}, style)
        wanted |= self._unit_rows(keys, bar_width, total)
        for target, budget in budgets.items():
            if budget.state == "fail" and target not in first_rows:
                cells = {k: ("", "") for k in keys}
                cells |= {"milestone": (target, ""), "elapsed": ("-", ""),
                          "budget": self._budget_cell(budget)}
                cells["bar"] = self._bar_cell(" " * bar_width, budget, total)
                wanted[BUDGET_ROW + target] = (cells, "phasepanel--fail")
        self._diff(wanted, keys)

    def _unit_rows(self, keys: list[str], bar_width: int, total: float
                   ) -> dict[str, tuple[dict[str, Cell], str]]:
        """User space's folded row and, unfolded, a row per unit: ready in the elapsed column,
        its time from start to ready, and a bar over that span."""
        if not self._units:
            return {}
        starts = [b for _, b, _ in self._units if b is not None]
        ends = [r for _, _, r in self._units if r is not None]
        first, last = min(starts, default=None), max(ends, default=None)
        width = self._layout[0][0][2]
        rows = {USER_SPACE_ROW: self._folded_label()}
        spans = {USER_SPACE_ROW: (first, last)}
        if self.units_open:
            for name, began, ready in self._units:
                rows[UNIT_ROW + name] = "  " + name
                spans[UNIT_ROW + name] = (began, ready)
        out: dict[str, tuple[dict[str, Cell], str]] = {}
        for key, name in rows.items():
            began, ready = spans[key]
            took = None if began is None or ready is None else ready - began
            cells: dict[str, Cell] = {k: ("", "") for k in keys}
            cells |= {"milestone": (fitted_name(name, "", width), ""),
                      "elapsed": (_seconds(ready), ""), "duration": (_seconds(took), ""),
                      "bar": (" " * bar_width if began is None or ready is None
                              else bar(began, ready, total, bar_width), "")}
            out[key] = ({k: cells[k] for k in keys}, "phasepanel--open" if key ==
                        USER_SPACE_ROW else "phasepanel--bar")
        return out

    @staticmethod
    def _budget_cell(budget: BudgetMark | None) -> Cell:
        if budget is None:
            return "", ""
        return BUDGET_GLYPHS[budget.state], BUDGET_STYLES[budget.state]

    @staticmethod
    def _bar_cell(bar_text: str, budget: BudgetMark | None, total: float) -> Cell:
        if budget is None:
            return bar_text, ""
        return with_tick(bar_text, budget.limit_s, total), BUDGET_STYLES[budget.state]

    def _diff(self, wanted: dict[str, tuple[dict[str, Cell], str]], keys: list[str]) -> None:
        # Rows are added at the end: late-budget rows make way for new milestones first.
        new_milestones = any(k not in self._shown and not k.startswith(BUDGET_ROW)
                             for k in wanted)
        for key in [k for k in self._shown if k not in wanted
                    or (new_milestones and k.startswith(BUDGET_ROW))]:
            self.remove_row(key)
            del self._shown[key]
            self._lines.pop(key, None)
        # The pane follows the newest milestone while a boot runs, as the console follows its
        # newest line, unless someone browsing it moved the cursor off the last row.
        following = not self.has_focus or self.cursor_row >= self.row_count - 1
        added = False
        for key, (cells, style) in wanted.items():
            shown = self._shown.get(key)
            if shown is None:
                added = True
                self.add_row(*(self._cell(k, cells[k], style) for k in keys), key=key)
            else:
                for column in keys:
                    if shown[1] != style or shown[0][column] != cells[column]:
                        self.update_cell(key, column, self._cell(column, cells[column], style))
            self._shown[key] = (cells, style)
        if added and following:
            self.move_cursor(row=self.row_count - 1, animate=False)

    def _cell(self, column: str, cell: Cell, row_style: str) -> Text:
        value, own_style = cell
        style = self._style(row_style)
        if column == "bar":
            text = Text(value, style=style, no_wrap=True)
            at = value.find(TICK)
            if at >= 0 and own_style:
                text.stylize(self._style(own_style), at, at + 1)
            return text
        own = self._style(own_style) if own_style else ""
        if column == "milestone":
            return Text(value, style=style if row_style == "phasepanel--fail" else own,
                        overflow="ellipsis", no_wrap=True)
        return Text(value, style=own, justify="center" if column == "budget" else "right")
