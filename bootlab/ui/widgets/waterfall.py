"""A waterfall of boot phases, several boots (or groups) on one time axis.

Milestone by milestone, in the order they were reached, each lane (a boot or a group's
medians) gets a bar from the milestone it reached just before to this one, so where a boot
gained or lost time shows as a bar that starts or ends elsewhere. Lanes are told apart by
their name on every row; colour only helps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.widget import Widget

from bootlab.ui.widgets.phase_panel import bar

LANE_STYLES = 4
"""Lanes cycle through this many colours (`waterfall--lane-N`)."""
NAME_WIDTH = 14
FIGURE_WIDTH = 8
MIN_BAR = 10
_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)


@dataclass(frozen=True)
class Lane:
    """One boot or group: its name and when it reached each milestone (seconds)."""

    name: str
    reached: dict[str, float]


def phase_spans(lane: Lane) -> dict[str, tuple[float, float]]:
    """Milestone id -> (start, end) of the phase ending at it: from the milestone the lane
    reached just before it in time (or from zero) to it."""
    spans: dict[str, tuple[float, float]] = {}
    start = 0.0
    for milestone, end in sorted(lane.reached.items(), key=lambda item: item[1]):
        spans[milestone] = (start, end)
        start = end
    return spans


def time_order(order: Sequence[str], lanes: Sequence[Lane]) -> list[str]:
    """The milestones by when they were reached: in the first lane that reached each (ties
    and the rest in `order`)."""
    def when(milestone: str) -> float:
        return next((lane.reached[milestone] for lane in lanes if milestone in lane.reached),
                    float("inf"))

    return sorted(order, key=when)


def axis(total_s: float, width: int) -> str:
    """A ruler `width` cells wide: `0 s` at the left and round times at their places."""
    if total_s <= 0 or width <= 0:
        return " " * max(width, 0)
    step = next((s for s in _STEPS if total_s / s <= width / 7), _STEPS[-1])
    cells = [" "] * width
    tick = 0.0
    while tick <= total_s:
        label = f"{tick:g} s"
        at = int(tick / total_s * width)
        end = at + len(label)
        if end <= width and all(c == " " for c in cells[max(0, at - 1):end]):
            cells[at:end] = label
        tick = round(tick + step, 6)
    return "".join(cells)


class Waterfall(Widget):
    """Phase bars of several lanes, milestone by milestone, on one axis."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "waterfall--axis", "waterfall--title",
        *(f"waterfall--lane-{n}" for n in range(LANE_STYLES))}
    DEFAULT_CSS = """
    Waterfall {
        height: auto;
        & > .waterfall--axis { color: $text-muted; }
        & > .waterfall--title { text-style: bold; }
        & > .waterfall--lane-0 { color: $primary; }
        & > .waterfall--lane-1 { color: $secondary; }
        & > .waterfall--lane-2 { color: $accent; }
        & > .waterfall--lane-3 { color: $warning; }
    }
    """

    def __init__(self, widget_id: str | None = None) -> None:
        super().__init__(id=widget_id)
        self.order: list[str] = []
        self.lanes: list[Lane] = []

    def show(self, order: Sequence[str], lanes: Sequence[Lane]) -> None:
        """Draw these milestones (in this order) for these lanes."""
        self.order = list(order)
        self.lanes = list(lanes)
        self.refresh(layout=True)

    def render(self) -> Text:
        """The axis, then per milestone its title and one bar per lane that reached it."""
        if not self.lanes:
            return Text("nothing to compare", style="italic")
        names = min(NAME_WIDTH, max(len(lane.name) for lane in self.lanes)) + 3
        width = max(MIN_BAR, self.size.width - names - FIGURE_WIDTH)
        spans = [phase_spans(lane) for lane in self.lanes]
        total = max((end for lane in spans for _, end in lane.values()), default=0.0)
        style = self.get_component_rich_style
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" " * names + axis(total, width), style=style("waterfall--axis"))
        for milestone in time_order(self.order, self.lanes):
            rows = [(n, lane[milestone]) for n, lane in enumerate(spans) if milestone in lane]
            if not rows:
                continue
            text.append("\n" + milestone, style=style("waterfall--title"))
            for n, (start, end) in rows:
                name = self.lanes[n].name
                name = name if len(name) <= names - 3 else name[:names - 4] + "…"
                text.append(f"\n  {name:<{names - 2}}")
                text.append(bar(start, end, total, width),
                            style=style(f"waterfall--lane-{n % LANE_STYLES}"))
                text.append(f"{end:>{FIGURE_WIDTH}.3f}")
        return text
