"""An A/B run's result: its one verdict at the goal (and the looks of a run until decided), per
milestone each variant's median and the difference to the first variant with its Welch
confidence interval (Bonferroni-adjusted away from the goal), in plain words; for a run spread
over several boards each variant's medians per board too, and that the statistics are blocked
by board; beside the prediction when the run was started from a recommendation."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from bootlab.control.abrun import ABReport
from bootlab.core.advice.predictions import check_predictions
from bootlab.core.advice.recommendation import Recommendation
from bootlab.core.analysis import compare


def result_text(report: ABReport, recommendation: Recommendation | None = None,
                order: dict[str, int] | None = None) -> Group:
    """The result as a headline, the prediction checked, the table, how each variant's
    settings were verified, and where it is kept."""
    columns = report.columns
    boots = "+".join(str(column.boots) for column in columns)
    boards = report.boards()
    on = f" on {len(boards)} boards, {compare.BLOCKED}" if boards else ""
    parts: list[Text | Table] = [Text(f"{' against '.join(reversed(report.variants))}: "
                                      f"{boots} boots, interleaved{on}", style="bold")]
    parts += [Text(f"verdict:   {verdict}", style="bold") for verdict in report.verdicts()]
    parts += [Text(line, style="dim") for line in report.looks]
    if recommendation is not None:
        parts.append(Text(f"predicted: {recommendation.title} saves "
                          f"{recommendation.predicted_ms:.0f} ms (to {recommendation.milestone})"))
        outcomes = check_predictions([recommendation], report.boots, order)
        parts += [Text(f"measured:  {outcome.text()}") for outcome in outcomes] or \
            [Text("measured:  no boots to compare")]
    table = Table(box=None, padding=(0, 1), show_edge=False)
    table.add_column("milestone")
    for name in report.variants:
        table.add_column(f"{name} median", justify="right")
    judging = report.judging
    table.add_column(f"against {report.variants[0]} (difference of the means" + (
        ", 95% CI)" if judging is None else f"; at {judging.goal} the verdict, elsewhere "
        f"Bonferroni-adjusted {judging.level * 100:.4g}% CI)"))
    for row in report.rows():
        medians = ["-" if m is None else f"{m:.3f} s" for m in row.medians]
        table.add_row(row.milestone, *medians, "; ".join(row.differences))
    parts += [Text(""), table, Text("")]
    if boards:
        parts += [Text(f"{compare.PER_BOARD}:", style="bold"), board_table(report), Text("")]
    evidence = report.evidence_text().strip().splitlines()
    if evidence:
        parts += [Text(evidence[0], style="bold"), *map(Text, evidence[1:]), Text("")]
    parts += [Text(f"Kept in {report.path}: `bootlab advise SESSION --ab {report.path}` puts it "
                   "beside the predictions; each boot is a session file.", style="dim")]
    return Group(*parts)


def board_table(report: ABReport) -> Table:
    """Each variant's median per board, milestone by milestone."""
    table = Table(box=None, padding=(0, 1), show_edge=False)
    table.add_column("milestone")
    for board in report.boards():
        for name in report.variants:
            table.add_column(f"{name}@{board}", justify="right")
    for milestone, medians in report.board_medians():
        table.add_row(milestone, *("-" if m is None else f"{m:.3f} s" for m in medians))
    return table


class ABResultScreen(ModalScreen[None]):
    """The result of an A/B run, over the main screen."""

    DEFAULT_CSS = """
    ABResultScreen {
        align: center middle;
        & > VerticalScroll {
            width: 110;
            max-width: 100%;
            height: 80%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="close-ab-result", tooltip="close")]

    def __init__(self, report: ABReport, recommendation: Recommendation | None = None,
                 order: dict[str, int] | None = None) -> None:
        super().__init__()
        self.report = report
        self.result = result_text(report, recommendation, order)
        """What the screen shows."""

    def compose(self) -> ComposeResult:
        """The result, scrollable."""
        with VerticalScroll() as box:
            box.border_title = f"A/B {self.report.name}"
            box.border_subtitle = "Esc closes"
            yield Static(self.result, id="ab-result")
