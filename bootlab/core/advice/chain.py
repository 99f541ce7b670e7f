"""Advice on user space: the unit on systemd's critical chain whose time, taken away, would
let the chain go on soonest (`analysis.systemd_units`).

A unit on the chain is what the unit above it waited for last. Were it done at once, that
unit could start sooner by what the unit took, but no sooner than the next of its other
dependencies was ready: the saving predicted is the lesser, never more than the unit's own
time (what else the unit above waited for after it is not this unit's). Only a record placed on the
session's clock is read: on a board clock not shown to keep time, no saving is predicted.
"""

from __future__ import annotations

from itertools import pairwise

from bootlab.core.advice.recommendation import Recommendation
from bootlab.core.analysis.phases import Boot
from bootlab.core.analysis.systemd_units import RecordedUnit, SystemdRecord

_CHANGE = {
    "service": "if the product does not need it, `systemctl mask` it; if it does, drop what "
               "orders the units above after it (its `WantedBy=`/`Before=`, or theirs "
               "`After=`), or make it start faster (`Type=`, its own work)",
    "mount": "mount it when first used (`x-systemd.automount` in /etc/fstab) or after the "
             "goal (`noauto` and a later unit)",
    "socket": "let the units above start without waiting for it (socket activation orders "
              "them after it only where they say `After=`)",
}


def _start(unit: RecordedUnit) -> float | None:
    return unit.began_host_s if unit.began_host_s is not None else unit.ready_host_s


def _saving(above: RecordedUnit, unit: RecordedUnit, record: SystemdRecord) -> float | None:
    """Seconds `above` would start sooner were `unit` done at once (None: not known): never
    more than the unit took (what else `above` waited for after it is not the unit's), nor
    than the time since the last of its other dependencies was ready."""
    by_name = {u.name: u for u in record.units}
    start, began, ready = _start(above), unit.began_host_s, unit.ready_host_s
    if start is None or began is None or ready is None:
        return None
    others = [u.ready_host_s for name in above.after if name != unit.name
              and (u := by_name.get(name)) is not None and u.ready_host_s is not None
              and u.ready_host_s <= start]
    return min(ready - began, start - max(others, default=began))


def slowest_on_chain(boot: Boot, goal: str, source: str) -> Recommendation | None:
    """The chain unit whose time, taken away, predicts the largest saving at `goal`."""
    record = boot.systemd
    if record is None or not record.placed or len(record.chain) < 2:
        return None
    best: tuple[float, RecordedUnit, RecordedUnit] | None = None
    for above, unit in pairwise(record.chain):
        saving = _saving(above, unit, record)
        if saving is not None and saving > 0 and (best is None or saving > best[0]):
            best = (saving, above, unit)
    if best is None:
        return None
    saving, above, unit = best
    kind = unit.name.rsplit(".", 1)[-1]
    took = unit.took_s or 0.0
    change = _CHANGE.get(kind, "start it later or make it faster")
    return Recommendation(
        f"unit:{unit.name}", f"{unit.name} on the critical chain", saving * 1000.0, [], None,
        f"{unit.name} took {took * 1000:.0f} ms, and {above.name} waited for it last on the "
        f"critical chain to {record.chain[0].name} (systemd's record, read after login). Were "
        f"it done at once, {above.name} would start {saving * 1000:.0f} ms sooner (then "
        f"waiting for its other dependencies): {change}.", goal, source=source)
