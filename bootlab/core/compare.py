"""Boots side by side: elapsed time per milestone, deltas against the first column.

Each column is one boot, or a group of boots sharing a label (then median, min, max, standard
deviation, count). Where both the first column and another hold two boots or more at a
milestone, their difference is given with Welch's 95% confidence interval (`stats.difference`),
in the JSON and as plain sentences below the text table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bootlab.core.phases import Boot, phase_rows
from bootlab.core.stats import Difference, Summary, describe, difference, summarize

LEVEL = 0.95
"""Confidence level of the differences' intervals."""
PROBE = "probe:"
"""Prefix of the rows holding post-boot probe figures (in the probe's own unit, not seconds)."""


@dataclass
class Column:
    """One boot or one group of boots."""

    name: str
    boots: int = 0
    values: dict[str, list[float]] = field(default_factory=dict)
    """Milestone id -> elapsed seconds, one per boot that reached it."""

    def summary(self, milestone: str) -> Summary | None:
        """The milestone's elapsed time over this column's boots."""
        return summarize(self.values.get(milestone, []))

    def difference(self, base: Column, milestone: str) -> Difference | None:
        """This column minus `base` at a milestone (None unless each has two boots or more)."""
        return difference(base.values.get(milestone, []), self.values.get(milestone, []), LEVEL)


@dataclass(frozen=True)
class Entry:
    """A boot to compare: its name (file), label and data."""

    name: str
    label: str
    boot: Boot
    reference: str = "first-byte"
    figures: dict[str, float] = field(default_factory=dict)
    """Post-boot probe figures of this boot, e.g. {"mem.used_kb": 25340.0}."""


def build_columns(entries: Sequence[Entry], group: bool = True) -> list[Column]:
    """One column per label (when grouping and the label is shared), else one per boot."""
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.label] = counts.get(entry.label, 0) + 1
    columns: dict[str, Column] = {}
    for entry in entries:
        grouped = group and bool(entry.label) and counts[entry.label] > 1
        key = entry.label if grouped else f"{entry.name}#{entry.boot.index}"
        column = columns.setdefault(key, Column(entry.label if grouped else entry.name))
        column.boots += 1
        seen: set[str] = set()
        for row in phase_rows(entry.boot, entry.reference):
            milestone = row.milestone.id
            if row.elapsed_s is None or milestone in seen:
                continue
            seen.add(milestone)
            column.values.setdefault(milestone, []).append(row.elapsed_s)
        for name, value in entry.figures.items():
            column.values.setdefault(PROBE + name, []).append(value)
    return list(columns.values())


def probe_figures(meta: dict[str, Any]) -> dict[str, float]:
    """A session's probe figures flattened: {"mem": {"used_kb": 1}} -> {"mem.used_kb": 1}."""
    probes = meta.get("probes")
    out: dict[str, float] = {}
    if isinstance(probes, dict):
        for probe, figures in probes.items():
            if isinstance(figures, dict):
                for key, value in figures.items():
                    if isinstance(value, int | float):
                        out[f"{probe}.{key}"] = float(value)
    return out


def _describe_figure(diff: Difference, label: str, row: str) -> str:
    """A probe figure's difference in its own unit, e.g. `quiet: mem.used_kb -32 (95% CI ...)`."""
    name = row[len(PROBE):]
    boots = f"{diff.n_a}+{diff.n_b} boots"
    if diff.degenerate:
        return f"{label}: {name} {diff.mean:+.6g} (every boot identical, {boots})"
    ci = f"{diff.level * 100:g}% CI {diff.low:+.6g}..{diff.high:+.6g}"
    if diff.shown:
        return f"{label}: {name} {diff.mean:+.6g} ({ci}, {boots})"
    return f"{label}: no difference shown in {name} ({ci}, {boots})"


def _say(diff: Difference, label: str, row: str) -> str:
    if row.startswith(PROBE):
        return _describe_figure(diff, label, row)
    return describe(diff, label, row)


def milestone_order(columns: Sequence[Column], profile_order: dict[str, int]) -> list[str]:
    """Every milestone any column reached, in profile order."""
    ids = {m for c in columns for m in c.values}
    return sorted(ids, key=lambda m: (profile_order.get(m, 10_000), m))


def _cell(summary: Summary | None, base: Summary | None, grouped: bool) -> str:
    if summary is None:
        return "-"
    text = f"{summary.median:.3f}"
    if grouped:
        text += f" [{summary.min:.3f}-{summary.max:.3f}]"
        if summary.stdev is not None:
            text += f" sd={summary.stdev:.3f}"
        text += f" n={summary.n}"
    if base is not None:
        text += f" ({summary.median - base.median:+.3f})"
    return text


def sentences(columns: Sequence[Column], order: Sequence[str]) -> list[str]:
    """Each column's differences against the first, milestone by milestone, as sentences."""
    out: list[str] = []
    for column in columns[1:]:
        for milestone in order:
            diff = column.difference(columns[0], milestone)
            if diff is not None:
                out.append(_say(diff, column.name, milestone))
    return out


def to_text(columns: Sequence[Column], order: Sequence[str]) -> str:
    """A table: milestones down, columns across; deltas against the first column.

    Below it, the differences against the first column as sentences (`sentences`).
    """
    if not columns:
        return "nothing to compare\n"
    head = ["milestone", *(f"{c.name} ({c.boots})" if c.boots > 1 else c.name for c in columns)]
    rows = [head]
    for milestone in order:
        base = columns[0].summary(milestone)
        row = [milestone]
        for i, column in enumerate(columns):
            row.append(_cell(column.summary(milestone), base if i else None, column.boots > 1))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    said = sentences(columns, order)
    if said:
        lines += ["", f"against {columns[0].name} (difference of the means, "
                      f"{LEVEL * 100:g}% confidence interval):", *said]
    return "\n".join(lines) + "\n"


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _difference_json(diff: Difference | None, column: str,
                     milestone: str) -> dict[str, Any] | None:
    if diff is None:
        return None
    return {"mean_ms": _ms(diff.mean), "low_ms": _ms(diff.low), "high_ms": _ms(diff.high),
            "median_delta_ms": _ms(diff.median_delta), "df": diff.df, "shown": diff.shown,
            "text": _say(diff, column, milestone)}


def to_json(columns: Sequence[Column], order: Sequence[str]) -> dict[str, Any]:
    """The comparison as data: per milestone, per column, summary and delta to column 1.

    Rows of kind "probe" hold probe figures in their own unit (the `_s`/`_ms` names then
    mean that unit). Each cell's `difference` is its column minus the first with the
    confidence interval
    (`{"mean_ms", "low_ms", "high_ms", "median_delta_ms", "df", "shown", "text"}`; `df` is
    null when no boot varied), or null (the first column, or fewer than two boots a side).
    """
    out: list[dict[str, Any]] = []
    for milestone in order:
        base = columns[0].summary(milestone) if columns else None
        cells = []
        for i, column in enumerate(columns):
            s = column.summary(milestone)
            cells.append(None if s is None else {
                "column": column.name, "n": s.n, "median_s": s.median, "min_s": s.min,
                "max_s": s.max, "stdev_s": s.stdev,
                "delta_s": None if base is None else s.median - base.median,
                "difference": _difference_json(
                    column.difference(columns[0], milestone) if i else None,
                    column.name, milestone),
            })
        kind = "probe" if milestone.startswith(PROBE) else "milestone"
        out.append({"id": milestone, "kind": kind, "columns": cells})
    return {"columns": [{"name": c.name, "boots": c.boots} for c in columns], "milestones": out}
