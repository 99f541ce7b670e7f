"""User space under the phase table: systemd's units, from their status lines, on the table's
own time axis (`analysis.units`)."""

from __future__ import annotations

from typing import Any

from bootlab.core.analysis.phases import Boot, PhaseRow, axis_zero
from bootlab.core.analysis.units import UnitStep, critical

SHOWN = 10
"""Units the text table lists: the slowest from start to readiness."""


def _at(value: float | None, zero: float | None) -> float | None:
    return None if value is None or zero is None else round(value - zero, 6)


def unit_records(boot: Boot, rows: list[PhaseRow]) -> list[dict[str, Any]]:
    """Every unit of a boot for JSON: began and ready on the table's axis, and what it took."""
    zero = axis_zero(rows)
    return [{"unit": s.name, "description": s.description, "kind": s.kind,
             "began_s": _at(s.began_s, zero), "ready_s": _at(s.ready_s, zero),
             "took_s": None if s.took_s is None else round(s.took_s, 6), "failed": s.failed,
             "lines": [n for n in (s.began_line, s.ready_line) if n is not None]}
            for s in boot.units]


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def unit_lines(boot: Boot, rows: list[PhaseRow]) -> list[str]:
    """The text under a boot's table: how many units, the last target reached, the slowest
    from start to readiness, and any that failed."""
    if not boot.units:
        return []
    zero = axis_zero(rows)
    ready = [s for s in boot.units if s.ready_s is not None]
    targets = [s for s in ready if s.unit_type == "target"]
    head = (f"boot {boot.index}: user space, {len(boot.units)} systemd units on the console's "
            f"status lines ({len(ready)} shown ready")
    if targets:
        head += f"; last target {targets[-1].name} at {_cell(_at(targets[-1].ready_s, zero))}"
    out = [head + "); slowest from start to ready:"]
    slow: list[UnitStep] = critical(boot.units, SHOWN)
    width = max((len(s.name) for s in slow), default=4)
    out.append(f"  {'unit':<{width}}  {'began':>8}  {'ready':>8}  {'took':>7}")
    out += [f"  {s.name:<{width}}  {_cell(_at(s.began_s, zero)):>8}  "
            f"{_cell(_at(s.ready_s, zero)):>8}  {_cell(s.took_s):>7}" for s in slow]
    out += [f"  FAILED {s.name} (line {s.ready_line or s.began_line})"
            for s in boot.units if s.failed]
    return out
