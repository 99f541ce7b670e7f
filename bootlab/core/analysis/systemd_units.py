"""User space as systemd itself recorded it, read after login (`systemctl show`).

systemd stamps each unit when it left `inactive` (began) and when it became `active` (ready),
on CLOCK_MONOTONIC, and knows what it was ordered after. `control.collect` reads that, with
the board's monotonic clock read twice (`/proc/uptime`), seconds apart, each read bracketed by
the host times its command was sent and its answer came back: two moments both clocks saw.
The clock is judged as dmesg's is (`boardclock`; a kernel on a tick-counted clocksource loses
time, and its dmesg says so), and every unit placed on the session's clock within the bounds,
or none is: a unit the reads cannot pin within ±50 ms leaves them all on the board's clock.

This is what a quiet boot has of user space: its console shows no status lines. Where the
console showed them, its units stay the console's (`analysis.units`), and systemd's record
gives the critical chain: from the last target reached, back through the unit each one waited
for last (the one among what it is ordered after that became ready last before it began), as
`systemd-analyze critical-chain` walks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bootlab.core.analysis.boardclock import (
    JOIN_LIMIT_MS,
    Anchor,
    BoardClock,
    judge,
    read_anchors,
)
from bootlab.core.analysis.collected import boot_of, collected_dmesg
from bootlab.core.analysis.goals import Goal, stored_goal
from bootlab.core.analysis.phases import Boot
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.analysis.units import UNIT_PREFIX, UnitStep, took
from bootlab.core.capture.sources import Source

UPTIME_GRAIN_S = 0.01
"""`/proc/uptime` prints hundredths: the clock read any time within the next one."""
CHAIN_LIMIT = 64
"""No chain is longer: a record ordered in a loop stops here."""


@dataclass(frozen=True, slots=True)
class RecordedUnit:
    """One unit as systemd recorded it: times on the board's monotonic clock (seconds; None:
    never), and, when placed, on the session's clock."""

    name: str
    description: str
    began_s: float | None
    ready_s: float | None
    after: tuple[str, ...] = ()
    began_host_s: float | None = None
    ready_host_s: float | None = None

    @property
    def took_s(self) -> float | None:
        """From leaving `inactive` to `active`, on the board's clock."""
        return took(self.began_s, self.ready_s)


@dataclass
class SystemdRecord:
    """A boot's units as systemd recorded them, how they were placed, and its critical chain."""

    units: list[RecordedUnit]
    placed: bool
    note: str
    """How the units were placed on the session's clock, or why not, in words."""
    chain: list[RecordedUnit] = field(default_factory=list)
    """The critical chain, from the last target reached back to the first unit it waited on."""


def _seconds(value: str | None) -> float | None:
    """A `...TimestampMonotonic` value (µs; 0: never) in seconds."""
    if value is None or not value.strip().isdigit() or int(value) == 0:
        return None
    return int(value) / 1e6


def parse_show(text: str) -> list[RecordedUnit]:
    """The units of a `systemctl show -p Id,Description,InactiveExitTimestampMonotonic,
    ActiveEnterTimestampMonotonic,After '*'` output (blocks of KEY=VALUE lines)."""
    units = []
    for block in text.replace("\r", "").split("\n\n"):
        keys = dict(line.partition("=")[::2] for line in block.splitlines() if "=" in line)
        if not keys.get("Id"):
            continue
        units.append(RecordedUnit(keys["Id"], keys.get("Description", ""),
                                  _seconds(keys.get("InactiveExitTimestampMonotonic")),
                                  _seconds(keys.get("ActiveEnterTimestampMonotonic")),
                                  tuple(keys.get("After", "").split())))
    return units


def critical_chain(units: Sequence[RecordedUnit], goal: str | None = None) -> list[RecordedUnit]:
    """From `goal` (default: the target that became ready last) back through the unit each
    waited for last: among what it is ordered after, the one ready last before it began."""
    by_name = {u.name: u for u in units}
    targets = [u for u in units if u.name.endswith(".target") and u.ready_s is not None]
    start = by_name.get(goal) if goal else max(targets, key=lambda u: u.ready_s or 0.0,
                                               default=None)
    chain: list[RecordedUnit] = []
    while start is not None and start.ready_s is not None and len(chain) < CHAIN_LIMIT \
            and start not in chain:
        chain.append(start)
        began = start.began_s if start.began_s is not None else start.ready_s
        waited = [u for name in start.after if (u := by_name.get(name)) is not None
                  and u.ready_s is not None and u.ready_s <= began]
        start = max(waited, key=lambda u: u.ready_s or 0.0, default=None)
    return chain


def collected_systemd(events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The systemd record a session's events hold (None: none was read)."""
    found = [e for e in events if e.get("event") == "collected"
             and e.get("source") == "systemd" and isinstance(e.get("text"), str)]
    return found[-1] if found else None


def clock_anchors(event: dict[str, Any]) -> list[Anchor]:
    """The reads of the board's monotonic clock (`/proc/uptime`, in s) as moments both
    clocks saw."""
    return read_anchors(event.get("uptime"), "s", 1.0, UPTIME_GRAIN_S, "uptime read")


def _place(units: Sequence[RecordedUnit], clock: BoardClock) -> list[RecordedUnit] | str:
    """Every unit on the session's clock, or why they stay on the board's."""
    placed = []
    for unit in units:
        times = []
        for board_s in (unit.began_s, unit.ready_s):
            at = None if board_s is None else clock.place(board_s)
            if board_s is not None and at is None:
                return (f"the reads do not pin {unit.name} within ±{JOIN_LIMIT_MS:.0f} ms "
                        "of the host's clock")
            times.append(None if at is None else at[0])
        placed.append(RecordedUnit(unit.name, unit.description, unit.began_s, unit.ready_s,
                                   unit.after, times[0], times[1]))
    return placed


def read_record(event: dict[str, Any], dmesg: str, goal: str | None = None) \
        -> SystemdRecord | None:
    """A collected systemd record judged and placed (None: it holds no units)."""
    units = parse_show(str(event.get("text") or ""))
    if not units:
        return None
    anchors = clock_anchors(event)
    clock = judge(anchors, dmesg, bracketed=True) if anchors else None
    why = "the board's monotonic clock was not read" if clock is None else clock.why
    if clock is None or not clock.keeps_time:
        return SystemdRecord(units, False, f"on the board's own clock: {why}",
                             critical_chain(units, goal))
    placed = _place(units, clock)
    if isinstance(placed, str):
        return SystemdRecord(units, False, f"on the board's own clock: {placed}",
                             critical_chain(units, goal))
    return SystemdRecord(placed, True, f"its monotonic clock, read twice: {why}",
                         critical_chain(placed, goal))


def _steps(record: SystemdRecord) -> list[UnitStep]:
    """The placed units as the table's user-space steps, ordered by readiness."""
    steps = [UnitStep(u.name, u.description, u.began_host_s, u.ready_host_s, kind="systemd")
             for u in record.units if u.ready_host_s is not None or u.began_host_s is not None]
    return sorted(steps, key=lambda s: (s.ready_s is None, s.ready_s or 0.0))


def _goal_unit(boot: Boot, goal: Goal | None) -> str | None:
    """The unit the critical chain ends at: the unit at which the boot reached its goal
    (the last of them when the goal is each of several), else the first unit it reached."""
    reached = None if goal is None else goal.reached(boot.milestones)
    if reached is not None and reached.id.startswith(UNIT_PREFIX):
        return reached.id.removeprefix(UNIT_PREFIX)
    return next((m.id.removeprefix(UNIT_PREFIX) for m in boot.milestones
                 if m.id.startswith(UNIT_PREFIX)), None)


def add_systemd(analysis: Analysis, source: Source) -> None:
    """Give the boot it was read after (`collected.boot_of`) systemd's record; where the
    console showed no units (`quiet`) and the record is placed, its units become the boot's."""
    events = source.session.events if source.session is not None else ()
    event = collected_systemd(events)
    boot = None if event is None else boot_of(analysis, event)
    if event is None or boot is None:
        return
    if boot.partial or boot.gap is not None:
        return
    dmesg = collected_dmesg(events)
    record = read_record(event, str(dmesg.get("text") or "") if dmesg else "",
                         _goal_unit(boot, stored_goal(source.meta)))
    boot.systemd = record
    if record is not None and record.placed and not boot.units:
        boot.units = _steps(record)
