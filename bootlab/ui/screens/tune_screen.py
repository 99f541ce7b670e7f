"""The tune screen: "Tune this board" live. The baseline and the best configuration so far,
each step as it is tried and decided (setting, predicted saving, measured saving with its
interval, boots, outcome, why), the A/B run's current boot and look, and at the end the result
and where the report is.

The tune runs as a board job on the port's thread (`board_jobs.tune_job`), which posts its
events here; the handlers own what is shown. The screen stays installed while the tune runs,
so Esc goes back to the console and the palette brings it back with every step.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from bootlab.core.board.tuneplan import (
    TuneBaseline,
    TuneRanked,
    TuneStep,
    TuneStepDone,
    TuneStepStarted,
)
from bootlab.core.render.tune_report import saving_text
from bootlab.session import events
from bootlab.ui.messages import ABLooked, ABProgressed, TuneEnded, TuneProgressed
from bootlab.ui.widgets.key_footer import KeyFooter
from bootlab.ui.widgets.table import LeanTable

COLUMNS = ("setting", "predicted", "measured saving [interval]", "boots", "outcome", "why")
RANKED_SHOWN = 3
"""Candidates named in the "next" line."""


class TuneScreen(Screen[None]):
    """A tune's steps, live."""

    DEFAULT_CSS = """
    TuneScreen {
        & > #tune-head { height: auto; padding: 0 1; background: $panel; }
        & > DataTable { height: 1fr; }
        & > #tune-look { height: auto; padding: 0 1; color: $text-muted; }
        & > #tune-result { height: auto; padding: 0 1; border-top: solid $primary; }
        & > #tune-result.-running { display: none; }
        & > .tune--kept { color: $success; text-style: bold; }
        & > .tune--rejected { color: $text-muted; }
        & > .tune--harmful { color: $error; text-style: bold; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"tune--kept", "tune--rejected", "tune--harmful"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "back", "Back", id="tune-back",
                tooltip="back to the console; the tune goes on (the palette brings it back)"),
    ]

    def __init__(self, goal: str) -> None:
        super().__init__()
        self.goal = goal
        self.steps: dict[str, TuneStep] = {}
        """Steps by A/B run name, as last reported."""
        self.baseline: TuneBaseline | None = None
        self.ranked: list[tuple[str, str, float]] = []
        self.look = ""
        """The current A/B boot and look, in words."""
        self.ended: events.TuneEnded | None = None

    def compose(self) -> ComposeResult:
        """The headline, the steps, the A/B line, the result."""
        yield Static(id="tune-head")
        table = LeanTable(id="tune-steps", cursor_type="row", zebra_stripes=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield Static(id="tune-look")
        yield Static(id="tune-result", classes="-running")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Show what is known (the screen may be shown again after Esc)."""
        self.query_one(DataTable).focus()
        self._show_head()
        self.query_one("#tune-look", Static).update(self.look or "measuring the board as it is")

    # --- the headline ------------------------------------------------------------------

    def best_text(self) -> str:
        """The kept settings and the goal they lead to (the baseline less their savings)."""
        kept = [s for s in self.steps.values() if s.outcome == "kept"]
        if not kept:
            return "current best: the board as it is"
        saved = sum(s.saving_ms or 0.0 for s in kept)
        at = "" if self.baseline is None else \
            f", {self.goal} ≈ {self.baseline.median_s - saved / 1000:.3f} s"
        return (f"current best: {', '.join(s.setting for s in kept)} "
                f"(measured savings {saved:.0f} ms{at})")

    def _show_head(self) -> None:
        base = "baseline: measuring" if self.baseline is None else \
            (f"baseline: {self.goal} at {self.baseline.median_s:.3f} s "
             f"(median of {self.baseline.boots} boots)")
        lines = [f"tune to {self.goal}: {base}", self.best_text()]
        if self.ranked and self.ended is None:
            lines.append("next: " + "; ".join(f"{setting} ({ms:.0f} ms)" for setting, _, ms
                                              in self.ranked[:RANKED_SHOWN]))
        self.query_one("#tune-head", Static).update("\n".join(lines))

    # --- the steps ---------------------------------------------------------------------

    def _cells(self, step: TuneStep) -> list[Text]:
        outcome = Text(step.outcome)
        if step.outcome in ("kept", "rejected", "harmful"):
            outcome.stylize(self.get_component_rich_style(f"tune--{step.outcome}",
                                                          partial=True))
        return [Text(step.setting), Text(f"{step.predicted_ms:.0f} ms", justify="right"),
                Text(saving_text(step), justify="right"), Text(str(step.boots or "-"),
                                                               justify="right"),
                outcome, Text(step.why)]

    def _show_step(self, step: TuneStep) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        key = step.ab_name or step.setting
        cells = self._cells(step)
        if key in self.steps:
            for column, cell in zip(COLUMNS, cells, strict=True):
                table.update_cell(key, column, cell, update_width=True)
        else:
            table.add_row(*cells, key=key)
        self.steps[key] = step

    def rows(self) -> list[list[str]]:
        """The steps as shown, as plain text (for tests and the result)."""
        table: DataTable[Text] = self.query_one(DataTable)
        return [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]

    # --- what the tune reports ---------------------------------------------------------

    @on(TuneProgressed)
    def _progressed(self, message: TuneProgressed) -> None:
        event = message.event.event
        if isinstance(event, TuneBaseline):
            self.baseline = event
        elif isinstance(event, TuneRanked):
            self.ranked = list(event.candidates)
        elif isinstance(event, TuneStepStarted | TuneStepDone):
            self._show_step(event.step)
            if isinstance(event, TuneStepDone):
                self.look = ""
                self.query_one("#tune-look", Static).update(
                    f"{event.step.setting}: {event.step.outcome}, {event.step.why}")
        self._show_head()

    @on(ABProgressed)
    def _booting(self, message: ABProgressed) -> None:
        """The step's A/B run: boot i of N, the last result, the last look."""
        event = message.event
        last = f" · last: {event.last}" if event.last else ""
        text = event.step.text + last + (f"\n{self.look}" if self.look else "")
        self.query_one("#tune-look", Static).update(text)

    @on(ABLooked)
    def _looked(self, message: ABLooked) -> None:
        """The step's interval after a look, narrowing."""
        event = message.event
        self.look = "; ".join(event.look.lines)
        self.query_one("#tune-look", Static).update(self.look)

    @on(TuneEnded)
    def _ended(self, message: TuneEnded) -> None:
        """The result, and where the report is."""
        event = self.ended = message.event
        lines = [f"stopped: {event.why}", *event.result]
        if event.report is not None:
            lines.append(f"report: {event.report} (`bootlab report "
                         f"{event.report.with_suffix('.json')}` gives it in other formats)")
        result = self.query_one("#tune-result", Static)
        result.update(Text("\n".join(lines)))
        result.remove_class("-running")
        self._show_head()

    def action_back(self) -> None:
        """Back to the console; the tune goes on."""
        self.app.pop_screen()
