"""Boots side by side: elapsed time per milestone, deltas against the first column.

Each column is one boot, or a group of boots sharing a label (then median, min, max, standard
deviation, count). Where both the first column and another hold two boots or more at a
milestone, their difference is given with Welch's 95% confidence interval (`stats.difference`),
in the JSON and as plain sentences below the text table.

An A/B run reads its differences with a `Judging`: one verdict, at the goal milestone
(`sequential.judge`: faster, slower, within the effect that matters, or undecided); the other
milestones are no verdicts, and their intervals are widened for how many are compared
(Bonferroni: each at 1 − 0.05/m), so that one of a dozen milestones differing by chance is not
read as a finding; and a difference shown at a milestone before the point where the variant's
setting can act (a kernel argument before the kernel starts) is flagged as noise or a
measurement artefact, never as a saving.

Boots of a run spread over several boards carry their board (`Entry.board`): differences are
then estimated within each board and pooled (`stats.by_board`: the board is a block, so one
board being slower than another is no spread of either variant), the sentences say "on N boards,
blocked", and the text shows each variant's medians per board too (`board_table`).
`build_columns(..., by_board=True)` groups by label and board instead (`compare --by-board`).
A boot with a gap in its recording (`analysis.gaps`) is left out of every column unless asked
for (`compare --include-incomplete`), and `incomplete` names those left out. Times count from
each boot's time zero (`analysis.timezero`: the power-on, reset or boot command bootlab caused)
only when every boot compared has one; else all count from their first byte, so a total from
power-on never meets one from a first byte, and `zero_note` says which way and why.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations, pairwise
from typing import Any

from bootlab.core.analysis.phases import Boot, PhaseRow, axis_zero, phase_rows
from bootlab.core.analysis.sequential import ALPHA, judge, verdict_text
from bootlab.core.analysis.stats import (
    Difference,
    Summary,
    boots_text,
    by_board,
    describe,
    summarize,
)
from bootlab.core.analysis.units import UNIT_NAME, UNIT_PREFIX

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""A row name from a session (a probe's figure) may hold control characters: shown escaped."""
LEVEL = 0.95
"""Confidence level of the differences' intervals."""
PROBE = "probe:"
"""Prefix of the rows holding post-boot probe figures (in the probe's own unit, not seconds)."""
PHASE = "phase:"
"""Prefix of the rows holding a phase's length: `phase:linux→init`, from one milestone to the
next in a boot's table, so a difference says which phase changed, not only where it shows."""
TOOK = "took:"
"""Prefix of the rows holding how long a systemd unit took from start to ready
(`analysis.units`)."""
EARLY = "before the setting can act: noise or a measurement artefact, not a saving"
"""What a difference shown before a variant's setting can act is called."""
BLOCKED = "blocked by board: estimated within each board, then pooled"
"""What a comparison over several boards says of its statistics (`stats.by_board`)."""


@dataclass
class Column:
    """One boot or one group of boots."""

    name: str
    boots: int = 0
    values: dict[str, list[float]] = field(default_factory=dict)
    """Milestone id -> elapsed seconds, one per boot that reached it."""
    boards: dict[str, list[str]] = field(default_factory=dict)
    """Milestone id -> the board of each of its values ('' or missing: not known)."""

    def summary(self, milestone: str) -> Summary | None:
        """The milestone's elapsed time over this column's boots."""
        return summarize(self.values.get(milestone, []))

    def boards_of(self, milestone: str) -> list[str]:
        """The board of each value at a milestone ('' where not known)."""
        values = self.values.get(milestone, [])
        return self.boards.get(milestone) or [""] * len(values)

    def board_names(self) -> list[str]:
        """The boards this column's boots ran on, sorted ('' where not known)."""
        return sorted({board for milestone in self.values for board in self.boards_of(milestone)})

    def on_board(self, board: str) -> Column:
        """This column's boots of one board."""
        part = Column(f"{self.name}@{board}")
        for milestone, values in self.values.items():
            kept = [v for v, b in zip(values, self.boards_of(milestone), strict=True) if b == board]
            if kept:
                part.values[milestone] = kept
                part.boards[milestone] = [board] * len(kept)
        part.boots = max(map(len, part.values.values()), default=0)
        return part

    def difference(self, base: Column, milestone: str,
                   level: float = LEVEL) -> Difference | None:
        """This column minus `base` at a milestone (None unless each has two boots or more;
        blocked by board when two boards or more hold both, `stats.by_board`)."""
        return by_board(base.values.get(milestone, []), self.values.get(milestone, []),
                        base.boards_of(milestone), self.boards_of(milestone), level)


@dataclass(frozen=True)
class Judging:
    """How an A/B run's differences are read: one verdict at the goal milestone, the others
    with Bonferroni-adjusted intervals, flagged when before the variant's setting can act."""

    goal: str
    """The goal milestone: the run's verdict is its difference."""
    effect_s: float
    """The smallest difference that matters (a verdict of "within" is smaller)."""
    goal_level: float = LEVEL
    """The verdict's confidence level (an `--until-decided` run's last look's)."""
    early: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Column name -> the milestones before its setting can act."""
    others: int = 1
    """How many differences besides the verdicts are compared (m; `make_judging`)."""

    @property
    def level(self) -> float:
        """The Bonferroni-adjusted level of the other milestones' intervals: 1 − 0.05/m."""
        return 1.0 - ALPHA / max(1, self.others)

    def verdicts(self, columns: Sequence[Column]) -> list[str]:
        """Each later column's one verdict against the first, at the goal."""
        out = []
        for column in columns[1:]:
            diff = column.difference(columns[0], self.goal, self.goal_level)
            out.append(verdict_text(judge(diff, self.effect_s), diff, column.name, self.goal,
                                    self.effect_s))
        return out


def make_judging(columns: Sequence[Column], order: Sequence[str], goal: str, effect_s: float,
            goal_level: float = LEVEL,
            early: Mapping[str, frozenset[str]] | None = None) -> Judging:
    """The `Judging` of these columns: the other differences counted for the adjustment."""
    others = sum(column.difference(columns[0], milestone) is not None
                 for column in columns[1:] for milestone in order if milestone != goal)
    return Judging(goal, effect_s, goal_level, early or {}, others)


@dataclass(frozen=True)
class Entry:
    """A boot to compare: its name (file), label and data."""

    name: str
    label: str
    boot: Boot
    reference: str = "first-byte"
    figures: dict[str, float] = field(default_factory=dict)
    """Post-boot probe figures of this boot, e.g. {"mem.used_kb": 25340.0}."""
    board: str = ""
    """The board it ran on, when its run was spread over several ('' otherwise)."""


def incomplete(entries: Sequence[Entry]) -> list[str]:
    """The boots `build_columns` leaves out, as `NAME#BOOT: why` (a gap: `analysis.gaps`)."""
    return [f"{entry.name}#{entry.boot.index}: {entry.boot.incomplete}" for entry in entries
            if entry.boot.incomplete]


def build_columns(entries: Sequence[Entry], group: bool = True,
                  by_board: bool = False, include_incomplete: bool = False) -> list[Column]:
    """One column per label (when grouping and the label is shared), else one per boot; with
    `by_board`, one per label and board (named `LABEL@BOARD`, or the board without a label).
    A boot with a gap is left out (`incomplete` says which), unless `include_incomplete`:
    then only its times on one side of the gap count (`phases.phase_rows`)."""
    if not include_incomplete:
        entries = [entry for entry in entries if not entry.boot.incomplete]
    zero = from_zero(entries)

    def label(entry: Entry) -> str:
        if not by_board or not entry.board:
            return entry.label
        return f"{entry.label}@{entry.board}" if entry.label else entry.board

    counts: dict[str, int] = {}
    for entry in entries:
        counts[label(entry)] = counts.get(label(entry), 0) + 1
    columns: dict[str, Column] = {}
    for entry in entries:
        grouped = group and bool(label(entry)) and counts[label(entry)] > 1
        key = label(entry) if grouped else f"{entry.name}#{entry.boot.index}"
        column = columns.setdefault(key, Column(label(entry) if grouped else entry.name))
        column.boots += 1
        seen: set[str] = set()
        boot = entry.boot if zero else replace(entry.boot, zero=None)
        table = phase_rows(boot, entry.reference)
        rows = [(row.milestone.id, row.elapsed_s) for row in table]
        for milestone, value in [*rows, *boot_figures(boot, table),
                                 *((PROBE + k, v) for k, v in entry.figures.items())]:
            if value is None or milestone in seen:
                continue
            seen.add(milestone)
            column.values.setdefault(milestone, []).append(value)
            column.boards.setdefault(milestone, []).append(entry.board)
    return list(columns.values())


def boot_figures(boot: Boot, table: Sequence[PhaseRow]) -> list[tuple[str, float | None]]:
    """What a boot measures besides its milestones' times: each phase's length, its systemd
    targets' times on the table's axis (`unit:NAME`), and each unit's time from start to
    ready (`took:NAME`; names the console cut are left out, they may be any unit's)."""
    out: list[tuple[str, float | None]] = []
    for row, after in pairwise(table):
        if row.elapsed_s is not None and after.delta_s is not None:
            out.append((f"{PHASE}{row.milestone.id}→{after.milestone.id}", after.delta_s))
    zero = axis_zero(table)
    for step in boot.units:
        if "…" in step.name or not UNIT_NAME.fullmatch(step.name):
            continue
        if step.unit_type == "target" and step.ready_s is not None and zero is not None:
            out.append((f"{UNIT_PREFIX}{step.name}", step.ready_s - zero))
        out.append((f"{TOOK}{step.name}", step.took_s))
    return out


def is_time(row: str) -> bool:
    """Whether a row holds times on the table's axis (a milestone's, a target's), not a
    length or a probe's figure."""
    return not row.startswith((PROBE, PHASE, TOOK))


def from_zero(entries: Sequence[Entry]) -> bool:
    """Whether the boots count from their time zero: every one has one."""
    return bool(entries) and all(entry.boot.zero is not None for entry in entries)


def zero_note(entries: Sequence[Entry], include_incomplete: bool = False) -> str | None:
    """Where the compared times count from, when some boot has a time zero: from each boot's
    time zero, or (a boot has none) from each boot's first byte, naming one without."""
    kept = [entry for entry in entries if entry.reference == "first-byte"
            and (include_incomplete or not entry.boot.incomplete)]
    if not any(entry.boot.zero is not None for entry in kept):
        return None
    if from_zero(kept):
        return ("times count from each boot's time zero (the power-on, reset or boot command "
                "bootlab caused and stamped)")
    without = [entry for entry in kept if entry.boot.zero is None]
    first = without[0]
    return (f"times count from each boot's first byte, not from time zero: {len(without)} of "
            f"{len(kept)} boots have none ({first.name}#{first.boot.index}: "
            f"{first.boot.zero_unknown or 'not known'})")


def blocked(columns: Sequence[Column]) -> bool:
    """Whether some column's boots ran on two boards or more (its differences are blocked)."""
    return any(len(column.board_names()) > 1 for column in columns)


def found_differently(entries: Sequence[Entry], milestone: str) -> str | None:
    """A sentence when `milestone` is found by different lines in different labels (each
    label's boots by one pattern, another label's by another or by a fallback), else None.

    The times then measure different events: `quiet` drops the kernel's `Run /sbin/init`, so
    `init` falls on user space's first line, later than the kernel's start of init; such a
    difference is not the setting's saving alone, and the A/B result says so."""
    ways: dict[str, dict[tuple[int, bool, str], str]] = {}
    for entry in entries:
        found = entry.boot.reached(milestone)
        if found is not None:
            key = (found.pattern, found.fallback, found.source)
            text = found.text.strip()
            ways.setdefault(entry.label, {}).setdefault(
                key, text if len(text) <= 60 else text[:59] + "…")
    if len(ways) < 2 or len({frozenset(w) for w in ways.values()}) == 1:
        return None
    if len({frozenset((k[0], k[1]) for k in w) for w in ways.values()}) == 1:
        return sources_differ(entries, milestone)
    said = "; ".join(f"{label}: " + " or ".join(
        f"{'a fallback at ' if fallback else ''}{'dmesg ' if source != 'console' else ''}"
        f"{text!r}" for (_, fallback, source), text in sorted(way.items()))
        for label, way in ways.items())
    return (f"{milestone} is found on different lines ({said}): its times measure different "
            "events, so its difference is not the setting's alone")


def sources_differ(entries: Sequence[Entry], milestone: str) -> str | None:
    """A sentence when `milestone` is timed from the console in one label and from a
    collected dmesg in another (`analysis.collected`), else None."""
    sources: dict[str, set[str]] = {}
    for entry in entries:
        found = entry.boot.reached(milestone)
        if found is not None:
            sources.setdefault(entry.label, set()).add(found.source)
    if len(sources) < 2 or len({frozenset(s) for s in sources.values()}) == 1:
        return None
    said = "; ".join(f"{label}: {' and '.join(sorted(found))}"
                     for label, found in sources.items())
    return (f"{milestone} is timed from different sources ({said}): a console line arrives "
            "after the kernel printed it (later still when the console is behind), dmesg gives "
            "when it was printed, so its difference is not the setting's alone")


def board_columns(columns: Sequence[Column]) -> list[Column]:
    """Each column's boots per board (`LABEL@BOARD`), board by board, the columns in order
    within each; [] unless the boots ran on two boards or more."""
    if not blocked(columns):
        return []
    boards = sorted({board for column in columns for board in column.board_names()})
    return [column.on_board(board) for board in boards for column in columns]


PER_BOARD = "medians per board (the differences are estimated within each board, then pooled)"
"""The heading of the per-board medians."""


def board_table(columns: Sequence[Column], order: Sequence[str]) -> list[str]:
    """Each column's median per board, milestone by milestone (`LABEL@BOARD` across); no
    lines unless the boots ran on two boards or more."""
    parts = board_columns(columns)
    if not parts:
        return []
    head = ["milestone", *(f"{part.name} ({part.boots})" for part in parts)]
    rows = [head, *([milestone, *(f"{s.median:.3f}" if (s := part.summary(milestone)) else "-"
                                  for part in parts)] for milestone in order)]
    return [f"{PER_BOARD}:", *_aligned(rows)]


def _aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as text: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                      for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
            for r in rows]


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
    boots = boots_text(diff)
    if diff.degenerate:
        return f"{label}: {name} {diff.mean:+.6g} (every boot identical, {boots})"
    ci = f"{diff.level * 100:.4g}% CI {diff.low:+.6g}..{diff.high:+.6g}"
    if diff.shown:
        return f"{label}: {name} {diff.mean:+.6g} ({ci}, {boots})"
    return f"{label}: no difference shown in {name} ({ci}, {boots})"


def _say(diff: Difference, label: str, row: str) -> str:
    if row.startswith(PROBE):
        return _describe_figure(diff, label, row)
    if row.startswith((PHASE, TOOK)):  # a length: its change is in it, not to it
        what = (f"the phase {row[len(PHASE):]}" if row.startswith(PHASE)
                else f"{row[len(TOOK):]} (start to ready)")
        return describe(diff, label, what).replace(f" to {what}", f" in {what}")
    return describe(diff, label, row)


def milestone_order(columns: Sequence[Column], profile_order: Mapping[str, int]) -> list[str]:
    """Every milestone any column reached, in time order (as `analyze` lists a boot's); then
    the probe rows, by name.

    Milestone a goes before b when, over the columns that reached both, the median of
    (a's median time − b's) is negative: a milestone only some columns reached lands where
    its times put it in those columns (`quiet` has no `Booting Linux` line, yet `linux` stays
    after `starting_kernel`), where one median over all columns would mix columns of
    different speeds. Where the columns say nothing (a tie, or no column reached both), the
    earlier median over the columns goes first, then the profile's order.
    """
    ids = {m for c in columns for m in c.values}
    medians = {m: {i: statistics.median(c.values[m]) for i, c in enumerate(columns)
                   if c.values.get(m)} for m in ids if is_time(m)}

    def key(milestone: str) -> tuple[float, int, str]:
        times = medians[milestone].values()
        return (statistics.median(times) if times else math.inf,
                profile_order.get(milestone, len(profile_order)), milestone)

    earlier: dict[str, set[str]] = {m: set() for m in medians}
    for a, b in combinations(medians, 2):
        shared = medians[a].keys() & medians[b].keys()
        if shared:
            gap = statistics.median(medians[a][i] - medians[b][i] for i in shared)
            if gap:
                earlier[b if gap < 0 else a].add(a if gap < 0 else b)
    order: list[str] = []
    left = set(medians)
    while left:  # the earliest of those with nothing earlier left (of all, in a cycle)
        ready = [m for m in left if not earlier[m] & left] or left
        order.append(min(ready, key=key))
        left.remove(order[-1])
    lengths = [m for m in ids - set(medians) if not m.startswith(PROBE)]
    place = {m: i for i, m in enumerate(order)}

    def length_key(row: str) -> tuple[bool, int, str]:
        """Phases in the order of the milestones they start at; units' lengths after."""
        start = row[len(PHASE):].split("→", 1)[0] if row.startswith(PHASE) else ""
        return row.startswith(TOOK), place.get(start, len(place)), row

    return [*order, *sorted(lengths, key=length_key),
            *sorted(m for m in ids if m.startswith(PROBE))]


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


def sentences(columns: Sequence[Column], order: Sequence[str],
              judging: Judging | None = None) -> list[str]:
    """Each column's differences against the first, milestone by milestone, as sentences.

    With a `judging`, the goal milestone is left to the verdicts, the others' intervals are at
    the adjusted level, and a difference shown before the setting can act says so.
    """
    level = LEVEL if judging is None else judging.level
    out: list[str] = []
    for column in columns[1:]:
        early = judging.early.get(column.name, frozenset()) if judging else frozenset()
        for milestone in order:
            if judging is not None and milestone == judging.goal:
                continue
            diff = column.difference(columns[0], milestone, level)
            if diff is not None and (diff.shown or not milestone.startswith(TOOK)):
                said = _say(diff, column.name, milestone)
                out.append(f"{said}: {EARLY}" if diff.shown and milestone in early else said)
    return out


def to_text(columns: Sequence[Column], order: Sequence[str],
            judging: Judging | None = None) -> str:
    """A table: milestones down, columns across; deltas against the first column.

    Below it, the differences against the first column as sentences (`sentences`); with a
    `judging`, the verdicts first and then the other milestones, adjusted (`judged_lines`).
    """
    if not columns:
        return "nothing to compare\n"
    head = ["milestone", *(f"{c.name} ({c.boots})" if c.boots > 1 else c.name for c in columns)]
    rows = [head]
    for milestone in (m for m in order if not m.startswith(TOOK)):  # units: as sentences
        base = columns[0].summary(milestone)
        row = [_CONTROL.sub(lambda c: f"\\x{ord(c.group()):02x}", milestone)]
        for i, column in enumerate(columns):
            row.append(_cell(column.summary(milestone), base if i else None, column.boots > 1))
        rows.append(row)
    lines = _aligned(rows)
    per_board = board_table(columns, order)
    if per_board:
        lines += ["", *per_board]
    if judging is not None:
        return "\n".join([*lines, "", *judged_lines(columns, order, judging)]) + "\n"
    said = sentences(columns, order)
    if said:
        how = f", {BLOCKED}" if blocked(columns) else ""
        lines += ["", f"against {columns[0].name} (difference of the means, "
                      f"{LEVEL * 100:g}% confidence interval{how}):", *said]
    return "\n".join(lines) + "\n"


def judged_lines(columns: Sequence[Column], order: Sequence[str], judging: Judging) -> list[str]:
    """The verdicts, then the other milestones' differences with the adjustment named."""
    if len(columns) < 2:
        return []
    how = f"; {BLOCKED}" if blocked(columns) else ""
    lines = [f"verdict, at the goal {judging.goal} (against {columns[0].name}; one per "
             f"variant{how}):", *judging.verdicts(columns)]
    said = sentences(columns, order, judging)
    if said:
        lines += ["", f"other milestones, no verdicts (Bonferroni for {judging.others} "
                      f"comparisons: each interval at {judging.level * 100:.4g}%):", *said]
    return lines


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _difference_json(diff: Difference | None, column: str,
                     milestone: str) -> dict[str, Any] | None:
    if diff is None:
        return None
    return {"mean_ms": _ms(diff.mean), "low_ms": _ms(diff.low), "high_ms": _ms(diff.high),
            "median_delta_ms": _ms(diff.median_delta), "df": diff.df, "shown": diff.shown,
            **({"boards": diff.boards} if diff.boards > 1 else {}),
            "text": _say(diff, column, milestone)}


def to_json(columns: Sequence[Column], order: Sequence[str]) -> dict[str, Any]:
    """The comparison as data: per milestone, per column, summary and delta to column 1.

    Rows of kind "probe" hold probe figures in their own unit (the `_s`/`_ms` names then
    mean that unit). Each cell's `difference` is its column minus the first with the
    confidence interval
    (`{"mean_ms", "low_ms", "high_ms", "median_delta_ms", "df", "shown", "text"}`, with
    `boards` when blocked by two boards or more; `df` is null when no boot varied), or null
    (the first column, or fewer than two boots a side). A column whose boots ran on several
    boards has `by_board` in its cells: {board: {"n", "median_s"}}; `blocked_by_board` is
    true when any has.
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
                **({"by_board": _by_board_json(column, milestone)}
                   if len(column.board_names()) > 1 else {}),
            })
        kind = "probe" if milestone.startswith(PROBE) else "phase" if milestone.startswith(
            PHASE) else "took" if milestone.startswith(TOOK) else "milestone"
        out.append({"id": milestone, "kind": kind, "columns": cells})
    return {"columns": [{"name": c.name, "boots": c.boots} for c in columns], "milestones": out,
            **({"blocked_by_board": True} if blocked(columns) else {})}


def _by_board_json(column: Column, milestone: str) -> dict[str, Any]:
    """A cell's median and count per board."""
    out = {}
    for board in column.board_names():
        summary = column.on_board(board).summary(milestone)
        if summary is not None:
            out[board] = {"n": summary.n, "median_s": summary.median}
    return out
