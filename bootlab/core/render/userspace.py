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


def chain_lines(boot: Boot, rows: list[PhaseRow]) -> list[str]:
    """systemd's record under a boot's table: where it was placed, and its critical chain,
    each unit's readiness (on the table's axis, else on the board's clock) and time taken."""
    record = boot.systemd
    if record is None:
        return []
    zero = axis_zero(rows)
    out = [f"boot {boot.index}: systemd's record, read after login: {len(record.units)} units "
           f"({record.note})"]
    if not record.chain:
        return out
    clock = "ready" if record.placed else "board s"
    out.append(f"  critical chain to {record.chain[0].name} (each unit waited for the next "
               "one down):")
    width = max(len(u.name) for u in record.chain)
    out.append(f"    {'unit':<{width}}  {clock:>8}  {'took':>7}")
    for unit in record.chain:
        at = _at(unit.ready_host_s, zero) if record.placed else unit.ready_s
        out.append(f"    {unit.name:<{width}}  {_cell(at):>8}  {_cell(unit.took_s):>7}")
    return out


def chain_record(boot: Boot, rows: list[PhaseRow]) -> dict[str, Any] | None:
    """systemd's record for JSON: its note, whether placed, and the critical chain."""
    record = boot.systemd
    if record is None:
        return None
    zero = axis_zero(rows)
    return {"note": record.note, "placed": record.placed, "units": len(record.units),
            "critical_chain": [{"unit": u.name, "ready_board_s": u.ready_s,
                                "ready_s": _at(u.ready_host_s, zero), "took_s": u.took_s}
                               for u in record.chain]}


def unit_lines(boot: Boot, rows: list[PhaseRow]) -> list[str]:
    """The text under a boot's table: systemd's record first, if read (its critical chain),
    then how many units, the last target reached, the slowest from start to readiness, and
    any that failed."""
    chain = chain_lines(boot, rows)
    if not boot.units:
        return chain
    zero = axis_zero(rows)
    ready = [s for s in boot.units if s.ready_s is not None]
    targets = [s for s in ready if s.unit_type == "target"]
    record = boot.systemd
    where = "on the console's status lines" if boot.units[0].kind != "systemd" or record is None \
        else f"as systemd recorded them, read after login ({record.note})"
    head = (f"boot {boot.index}: user space, {len(boot.units)} systemd units {where} "
            f"({len(ready)} shown ready")
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
    return chain + out


def host_spans(boot: Boot) -> list[tuple[str, float, float]]:
    """User space as spans on the session's clock, to be drawn: the critical chain from its
    first unit, where systemd's record was placed, else the slowest units; each (name,
    began, ready)."""
    record = boot.systemd
    if record is not None and record.placed and record.chain:
        units = [(u.name, u.began_host_s, u.ready_host_s) for u in reversed(record.chain)]
    else:
        units = [(s.name, s.began_s, s.ready_s) for s in critical(boot.units, SHOWN)]
    return [(name, began, ready) for name, began, ready in units
            if began is not None and ready is not None]


def unit_spans(boot: Boot, rows: list[PhaseRow]) -> list[tuple[str, float, float]]:
    """`host_spans` on the table's axis, for a waterfall."""
    zero = axis_zero(rows)
    return [] if zero is None else [(name, began - zero, ready - zero)
                                    for name, began, ready in host_spans(boot)]
