"""U-Boot's own stages before its prompt (bootstage), kept with the boot `boot` started.

`control.bootstage` reads U-Boot's `bootstage report` at the prompt bootlab stopped at, and
U-Boot's timer twice with `gettime`, seconds apart. The report gives each stage's mark on
U-Boot's timer, from its zero (`reset`); the two timer reads are moments both clocks saw, so
the timer is judged as a board clock is (`boardclock`: it keeps time, or it is shown not to,
as when U-Boot's TSC calibration fails and its timer runs 2.6x fast), and each mark is placed
on the session's clock within its bounds. Where the timer cannot be checked (no `gettime`, or
reads that disagree with the host) the stages stay on U-Boot's own timer, and say why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bootlab.core.analysis.boardclock import (
    JOIN_LIMIT_MS,
    Anchor,
    BoardClock,
    judge,
    read_anchors,
)
from bootlab.core.analysis.collected import boot_of
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.capture.sources import Source

_HEAD = re.compile(r"Timer summary in microseconds \((\d+) records?\):")
_MARK = re.compile(r"^\s*([\d,]+)\s+([\d,]+)\s+(\S.*?)\s*$")
_ACCUMULATED = re.compile(r"^\s*([\d,]+)\s+(\S.*?)\s*$")
READ_GRAIN_S = 0.001
"""`gettime` prints whole milliseconds: the timer read any time within the next one."""


@dataclass(frozen=True, slots=True)
class Stage:
    """One bootstage mark: its name, its time on U-Boot's timer, and, when the timer was
    checked, its host time on the session's clock with its uncertainty."""

    name: str
    mark_s: float
    host_s: float | None = None
    uncertainty_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Bootstage:
    """U-Boot's stages of the power cycle a boot continued, as its report gave them."""

    stages: tuple[Stage, ...]
    accumulated: tuple[tuple[str, float], ...]
    """Time spent in a stage over several visits (`dm_f`, `dm_r`), seconds."""
    placed: bool
    note: str
    """How the marks were placed on the session's clock, or why they were not, in words."""


def parse_report(text: str) -> tuple[tuple[Stage, ...], tuple[tuple[str, float], ...]]:
    """The marks and accumulated times of a `bootstage report`."""
    stages: list[Stage] = []
    accumulated: list[tuple[str, float]] = []
    section = ""
    for line in text.splitlines():
        if _HEAD.search(line):
            section = "marks"
        elif line.strip().startswith("Accumulated time"):
            section = "accumulated"
        elif section == "marks" and (mark := _MARK.match(line)):
            stages.append(Stage(mark.group(3), int(mark.group(1).replace(",", "")) / 1e6))
        elif section == "accumulated" and (spent := _ACCUMULATED.match(line)):
            accumulated.append((spent.group(2), int(spent.group(1).replace(",", "")) / 1e6))
    return tuple(stages), tuple(accumulated)


def collected_bootstage(events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The bootstage a session's events hold (None: none was read)."""
    found = [e for e in events if e.get("event") == "collected"
             and e.get("source") == "bootstage" and isinstance(e.get("text"), str)]
    return found[-1] if found else None


def timer_anchors(event: dict[str, Any]) -> list[Anchor]:
    """U-Boot's timer reads (`gettime`, in ms) as moments both clocks saw."""
    return read_anchors(event.get("timer"), "ms", 1e-3, READ_GRAIN_S, "`gettime` read")


def _placed(stages: Sequence[Stage], clock: BoardClock) -> tuple[Stage, ...] | str:
    """The stages on the session's clock, or why not: a mark the reads cannot pin within
    `JOIN_LIMIT_MS`, or one placed after the first read (the report and `gettime` are then
    not on one timer)."""
    out = []
    first_read = clock.anchors[0].host_s if clock.anchors else None
    for stage in stages:
        bounds = clock.bounds(stage.mark_s)
        placed = clock.place(stage.mark_s)
        if bounds is not None and first_read is not None and bounds[0] > first_read:
            return "its marks and its `gettime` reads do not fit one timer"
        if placed is None:
            return (f"its `gettime` reads do not pin {stage.name} within "
                    f"±{JOIN_LIMIT_MS:.0f} ms (slow answers)")
        out.append(Stage(stage.name, stage.mark_s, placed[0], placed[1]))
    return tuple(out)


def read_bootstage(event: dict[str, Any]) -> Bootstage | None:
    """A collected bootstage event judged and placed (None: its report holds no marks)."""
    stages, accumulated = parse_report(str(event.get("text") or ""))
    if not stages:
        return None
    anchors = timer_anchors(event)
    if not anchors:
        return Bootstage(stages, accumulated, False, "on U-Boot's own timer, not checked "
                         "against the host's: this U-Boot has no `gettime` to read it")
    clock = judge(anchors, "", bracketed=True)
    if not clock.keeps_time:
        return Bootstage(stages, accumulated, False,
                         f"on U-Boot's own timer, not placed: {clock.why}")
    placed = _placed(stages, clock)
    if isinstance(placed, str):
        return Bootstage(stages, accumulated, False,
                         f"on U-Boot's own timer, not placed: {placed}")
    widest = max(s.uncertainty_ms or 0.0 for s in placed)
    return Bootstage(placed, accumulated, True, f"U-Boot's timer, read by `gettime`: "
                     f"{clock.why}; its marks placed within ±{widest:.1f} ms")


def add_bootstage(analysis: Analysis, source: Source) -> None:
    """Give the boot a session's bootstage belongs to (its first: the one `boot` started)
    U-Boot's stages."""
    event = collected_bootstage(source.session.events if source.session is not None else ())
    boot = None if event is None else boot_of(analysis, event)
    if event is not None and boot is not None:
        boot.bootstage = read_bootstage(event)
