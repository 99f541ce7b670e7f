"""Predictions checked against A/B runs: the difference a run measured for a recommendation's
setting, beside the saving the log predicted (`check_predictions`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bootlab.core.advice.recommendation import Recommendation
from bootlab.core.analysis.compare import Entry, build_columns, milestone_order
from bootlab.core.analysis.phases import Boot
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.analysis.stats import Difference, describe
from bootlab.core.board.abplan import SpecError, SpecItem, parse_spec
from bootlab.core.board.cmdline import token_name


@dataclass(frozen=True)
class ABBoot:
    """A boot recorded by `bootlab ab`: its run, variant and settings spec."""

    run: str
    variant: str
    spec: str
    boot: Boot


def ab_boots(meta: Mapping[str, object], analysis: Analysis) -> list[ABBoot]:
    """The boots of a session recorded by an A/B run (none if it was not)."""
    tag = meta.get("ab")
    if not isinstance(tag, dict) or not isinstance(tag.get("variant"), str):
        return []
    return [ABBoot(str(tag.get("name", "")), tag["variant"], str(tag.get("spec") or ""), boot)
            for boot in analysis.boots]


def _tests(item: SpecItem, setting: str) -> bool:
    """Whether a spec item switches the given setting."""
    if item.kind in ("setting", "uboot"):
        return item.name == setting
    name = token_name(item.value or "")
    return name == setting if item.kind == "cmdline_add" else f"no_{name}" == setting


def _items(spec: str) -> list[SpecItem]:
    try:
        return parse_spec(spec)
    except SpecError:
        return []


@dataclass(frozen=True)
class Outcome:
    """A prediction beside what an A/B run measured."""

    recommendation: Recommendation
    run: str
    variant: str
    milestone: str
    difference: Difference | None
    """The variant minus the base at `milestone` (None: fewer than two boots a side)."""

    @property
    def measured_ms(self) -> float | None:
        """The saving measured (positive: faster), from the difference of the means."""
        return None if self.difference is None else -self.difference.mean * 1000.0

    def text(self) -> str:
        """The measurement in words, e.g. `quiet: -412 ms to login (95% CI ..., 5+5 boots)`."""
        if self.difference is None:
            return f"{self.variant}: too few boots to measure (two a side needed)"
        return describe(self.difference, self.variant, self.milestone)


def check_predictions(recommendations: Sequence[Recommendation], boots: Sequence[ABBoot],
                      order: Mapping[str, int] | None = None) -> list[Outcome]:
    """The measured difference beside each prediction an A/B run tested.

    A variant tests a recommendation when its spec switches the recommendation's setting; it
    is compared with its run's base (the variant with an empty spec) at the recommendation's
    milestone, or the last milestone both reached.
    """
    outcomes: list[Outcome] = []
    runs: dict[str, list[ABBoot]] = {}
    for boot in boots:
        runs.setdefault(boot.run, []).append(boot)
    for run, members in runs.items():
        base = next((b.variant for b in members if not _items(b.spec)), None)
        if base is None:
            continue
        entries = [Entry(b.variant, b.variant, b.boot) for b in members]
        columns = {c.name: c for c in build_columns(entries)}
        specs = {b.variant: _items(b.spec) for b in members}
        for rec in recommendations:
            for variant, items in specs.items():
                if rec.setting is None or not any(_tests(i, rec.setting) for i in items):
                    continue
                pair = [columns[base], columns[variant]]
                common = [m for m in milestone_order(pair, dict(order or {}))
                          if all(m in c.values for c in pair)]
                if not common:
                    continue
                milestone = rec.milestone if rec.milestone in common else common[-1]
                outcomes.append(Outcome(rec, run, variant, milestone,
                                        columns[variant].difference(columns[base], milestone)))
    return outcomes
