"""U-Boot's own stages (bootstage), kept with the boot they belong to.

Three places hold them:
- the prompt: `control.bootstage` reads U-Boot's `bootstage report` at the prompt bootlab
  stopped at, and U-Boot's timer twice with `gettime`, seconds apart. The report gives each
  stage's mark on U-Boot's timer, from its zero (`reset`); the two timer reads are moments both
  clocks saw, so the timer is judged as a board clock is (`boardclock`: it keeps time, or it
  is shown not to, as when U-Boot's TSC calibration fails and its timer runs 2.6x fast), and
  each mark is placed on the session's clock within its bounds;
- the console: a U-Boot built with `CONFIG_BOOTSTAGE_REPORT` prints the same report itself
  before `Starting kernel`, autoboot included;
- the device tree: one built with `CONFIG_BOOTSTAGE_FDT` hands its records to the kernel in
  `/bootstage`, which `--collect` reads from `/proc/device-tree/bootstage` after login.
Where the timer cannot be checked (the console's and the device tree's: no timer reads; no
`gettime`; reads that disagree with the host) the stages stay on U-Boot's own timer, and say
why.
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
from bootlab.core.analysis.clocks import boot_lines
from bootlab.core.analysis.collected import boot_of
from bootlab.core.analysis.phases import ParsedLine
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
    where: str = "read at its prompt before `boot`"
    """Where bootlab found the report, in words."""


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


UNCHECKED = ("on U-Boot's own timer: no read of it was bracketed by the host's clock, so "
             "whether it kept time is not known")
ON_CONSOLE = "its own report, printed on the console before `Starting kernel`"
IN_DEVICE_TREE = "its records in the device tree (/proc/device-tree/bootstage), read after login"


def console_report(lines: Sequence[ParsedLine]) -> str | None:
    """The report a U-Boot built with `CONFIG_BOOTSTAGE_REPORT` printed on the console, as
    its text: a report followed by `Starting kernel` (one typed at the prompt is followed by
    the prompt). None: the boot's lines show none; the last, if several."""
    found: list[str] | None = None
    block: list[str] | None = None
    for line in lines:
        text = line.message.rstrip()
        if _HEAD.search(text):
            block = [text]
        elif block is not None:
            if _MARK.match(text) or _ACCUMULATED.match(text) or text.strip().startswith(
                    ("Mark", "Accumulated time")):
                block.append(text)
            elif text.strip():  # U-Boot's own report goes on to the kernel; one typed at
                if "Starting kernel" in text:  # its prompt, back to the prompt
                    found = block
                block = None
    return "\n".join(found) if found else None


def tree_report(records: object) -> str | None:
    """The device tree's bootstage records (`{"name", "mark"}` or `{"name", "accum"}`, in
    microseconds, as `control.collect` read them) as a report's text (None: none)."""
    if not isinstance(records, list):
        return None
    marks = [r for r in records if isinstance(r, dict) and isinstance(r.get("name"), str)
             and isinstance(r.get("mark"), int)]
    spent = [r for r in records if isinstance(r, dict) and isinstance(r.get("name"), str)
             and isinstance(r.get("accum"), int)]
    if not marks:
        return None
    marks.sort(key=lambda r: r["mark"])
    head = f"Timer summary in microseconds ({len(marks)} records):"
    return "\n".join([head, *(f"{r['mark']:>11} {0:>10}  {r['name']}" for r in marks),
                      "Accumulated time:", *(f"{r['accum']:>22}  {r['name']}" for r in spent)])


def add_bootstage(analysis: Analysis, source: Source) -> None:
    """Give each boot its U-Boot stages: those read at the prompt `boot` was typed at, else
    those U-Boot printed on the console, else those the device tree gave the kernel."""
    events = source.session.events if source.session is not None else ()
    event = collected_bootstage(events)
    boot = None if event is None else boot_of(analysis, event)
    if event is not None and boot is not None:
        boot.bootstage = read_bootstage(event)
    tree = [e for e in events if e.get("event") == "collected" and e.get("source") == "fdt"]
    if source.session is None:  # a big session read in blocks: its stream is not loaded
        return
    for found in analysis.boots:
        if found.bootstage is not None or found.partial:
            continue
        text = console_report(boot_lines(source, analysis, found))
        where = ON_CONSOLE
        if text is None:
            read = next((e for e in reversed(tree) if boot_of(analysis, e) is found), None)
            text, where = (None if read is None else tree_report(read.get("records"))), \
                IN_DEVICE_TREE
        stages, accumulated = parse_report(text or "")
        if stages:
            found.bootstage = Bootstage(stages, accumulated, False, UNCHECKED, where)
