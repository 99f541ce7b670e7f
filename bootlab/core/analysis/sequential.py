"""Runs that stop when the answer is known: a group-sequential design for an A/B run's goal
milestone, its verdicts, and how many boots a difference needs.

**Looks.** Boots come in balanced rounds (each variant once per round). The run is judged at
planned looks, after `LOOKS` boots per variant (3, 5, 8, 12, 18, 27, 40), capped by the budget,
which is always the last look.

**Alpha spending (Bonferroni, in proportion to the boots added).** Look k gets
alpha_k = alpha · (n_k − n_{k−1}) / n_K of the error rate, and with several variants against the
first each comparison gets 1/(variants − 1) of that. The shares add up to alpha, so by the union
bound every look's interval covers the true difference at once with probability 1 − alpha or
more, however the looks are correlated: a verdict read from an interval is wrong in at most
alpha of runs. This is simple and conservative (a Pocock or O'Brien–Fleming boundary spends the
same alpha more tightly); a 95% interval at every look, the naive peek, is wrong far more often
(tests/test_sequential.py shows both by simulation).

**Verdict at a look.** Welch's interval of the goal's difference (`stats.difference`), or for a
run spread over several boards the interval with the board as a block (`stats.by_board`), at
level 1 − alpha_k: "faster" or "slower" when it excludes zero, "within" when it lies inside
(−effect, +effect) (no difference that matters), else "undecided"; when the budget is spent the
run ends undecided, with that interval.

**Power.** `boots_needed` is the normal approximation n = 2·((z_{1−α/2} + z_power)·sd/effect)²
boots per variant; `power_table` gives it for a board's spread (`pooled_sd` of its recorded
boots), with the look by which an `--until-decided` run is likely to stop.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bootlab.core.analysis.stats import Difference, boots_text, by_board

LOOKS = (3, 5, 8, 12, 18, 27, 40)
"""Boots per variant at which a sequential run is judged (the budget caps them)."""
ALPHA = 0.05
"""The run's error rate: the chance that its verdict is wrong."""
POWER = 0.8
"""The chance a difference of the given size is found (the power table)."""
DEFAULT_EFFECT_S = 0.05
"""The smallest difference that matters, unless told (`--effect`)."""
DEFAULT_MAX_BOOTS = 40
"""Boots per variant a sequential run may use at most, unless told (`--max-boots`)."""
TABLE_EFFECTS_S = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
"""The differences the power table shows (with the run's own effect)."""
METHOD = "Bonferroni alpha spending in proportion to the boots added at each look"

Verdict = Literal["faster", "slower", "within", "undecided"]

_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)\s*\Z")


def parse_effect(text: str) -> float:
    """A difference that matters, in seconds: `50ms`, `0.05s`, `2s`.

    Raises:
        ValueError: not a positive number of ms or s.
    """
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"effect {text!r}: write a duration such as 50ms, 0.05s or 2s")
    seconds = float(match[1]) / (1000.0 if match[2] == "ms" else 1.0)
    if seconds <= 0:
        raise ValueError(f"effect {text!r}: must be more than zero")
    return seconds


def ms(seconds: float) -> str:
    """Whole milliseconds with a sign: `-210`, `+35`, `0`."""
    value = round(seconds * 1000.0)
    return "0" if value == 0 else f"{value:+d}"


@dataclass(frozen=True)
class Design:
    """When a sequential run is judged, and at which confidence level each time."""

    looks: tuple[int, ...]
    """Boots per variant at each look, increasing; the last is the budget."""
    alphas: tuple[float, ...]
    """The error rate each look's interval is allowed (one per look)."""

    def level(self, index: int) -> float:
        """Confidence level of look `index`'s interval (0-based)."""
        return 1.0 - self.alphas[index]


def spending(max_boots: int, alpha: float = ALPHA, comparisons: int = 1) -> Design:
    """The looks of a run with a budget of `max_boots` per variant, alpha spent in proportion
    to the boots each look adds, split evenly over `comparisons` (variants after the first).

    Raises:
        ValueError: a budget under two boots (an interval needs two a side), or no comparison.
    """
    if max_boots < 2:
        raise ValueError(f"--max-boots {max_boots}: an interval needs two boots a side or more")
    if comparisons < 1:
        raise ValueError("a sequential run compares at least two variants")
    looks = (*(n for n in LOOKS if n < max_boots), max_boots)
    added = [n - before for n, before in zip(looks, (0, *looks), strict=False)]
    return Design(looks, tuple(alpha * step / max_boots / comparisons for step in added))


def judge(diff: Difference | None, effect_s: float) -> Verdict:
    """What an interval says: a direction when it excludes zero, "within" when it lies inside
    (−effect, +effect), else "undecided" (also when there are fewer than two boots a side)."""
    if diff is None:
        return "undecided"
    if diff.high < 0.0:
        return "faster"
    if diff.low > 0.0:
        return "slower"
    if -effect_s < diff.low and diff.high < effect_s:
        return "within"
    return "undecided"


@dataclass(frozen=True)
class Look:
    """One look of a sequential run at one variant against the first."""

    number: int
    """1 for the first look."""
    boots: int
    """Boots per variant so far."""
    level: float
    diff: Difference | None
    verdict: Verdict
    final: bool
    """The budget is spent: the run ends here whatever the verdict."""

    @property
    def decided(self) -> bool:
        """The interval answers the question: the run may stop."""
        return self.verdict != "undecided"

    def text(self, effect_s: float) -> str:
        """`look 2 (5 boots each, 99.4% CI): -210 ms [-330, -90], faster`."""
        head = f"look {self.number} ({self.boots} boots each, {self.level * 100:.4g}% CI)"
        if self.diff is None:
            return f"{head}: fewer than two boots a side, undecided"
        word = f"within ±{effect_s * 1000:g} ms" if self.verdict == "within" else self.verdict
        return (f"{head}: {ms(self.diff.mean)} ms [{ms(self.diff.low)}, {ms(self.diff.high)}], "
                f"{word}")


def look(design: Design, index: int, base: Sequence[float], other: Sequence[float],
         effect_s: float, base_boards: Sequence[str] | None = None,
         other_boards: Sequence[str] | None = None) -> Look:
    """Judge look `index` (0-based): `other` minus `base` (seconds to the goal, one per boot),
    with the board of each boot when known (`stats.by_board`; else all on one board)."""
    level = design.level(index)
    diff = by_board(base, other, base_boards or [""] * len(base),
                    other_boards or [""] * len(other), level)
    return Look(index + 1, design.looks[index], level, diff, judge(diff, effect_s),
                index == len(design.looks) - 1)


def verdict_text(verdict: Verdict, diff: Difference | None, label: str, milestone: str,
                 effect_s: float) -> str:
    """The run's one verdict in words, e.g. `quiet: faster to login by 210 ms (99.6% CI
    -330..-90 ms, 5+5 boots)`; "within" says no difference that matters."""
    if diff is None:
        return f"{label}: undecided at {milestone}: fewer than two boots a side"
    effect = f"±{effect_s * 1000:g} ms"
    ci = f"{diff.level * 100:.4g}% CI {ms(diff.low)}..{ms(diff.high)} ms, {boots_text(diff)}"
    if verdict in ("faster", "slower"):
        small = f"; less than the {effect} that matters" \
            if -effect_s < diff.low and diff.high < effect_s else ""
        return (f"{label}: {verdict} to {milestone} by {abs(diff.mean) * 1000:.0f} ms "
                f"({ci}{small})")
    if verdict == "within":
        return (f"{label}: no difference that matters to {milestone}: {ms(diff.mean)} ms "
                f"({ci}), within {effect}")
    return (f"{label}: undecided at {milestone}: {ms(diff.mean)} ms ({ci}): neither a "
            f"difference nor within {effect}; more boots would tell")


def boots_needed(sd: float, effect_s: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Boots per variant for a two-sided test at `alpha` to find a difference of `effect_s`
    with `power`, when boots spread by `sd` (normal approximation, at least 2)."""
    normal = statistics.NormalDist()
    z = normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)
    return max(2, math.ceil(2.0 * (z * sd / effect_s) ** 2))


def pooled_sd(groups: Sequence[Sequence[float]]) -> float | None:
    """The spread of boots within groups of like boots (each group one setting), pooled;
    None without a group of two boots or more."""
    sums = [(len(g) - 1, statistics.variance(g) * (len(g) - 1)) for g in groups if len(g) > 1]
    freedom = sum(n for n, _ in sums)
    return math.sqrt(sum(s for _, s in sums) / freedom) if freedom else None


@dataclass(frozen=True)
class PowerRow:
    """How many boots a difference needs."""

    effect_s: float
    fixed: int
    """Boots per variant for a fixed run at 95% (`boots_needed`)."""
    look: int | None
    """The first look whose own alpha and boots give the power: a sequential run likely stops
    by then (None: not within the budget)."""
    boots: int | None
    """Boots per variant at that look."""

    def text(self) -> str:
        """`a difference of 50 ms needs 12 boots per variant (...)`."""
        head = f"a difference of {self.effect_s * 1000:g} ms needs {self.fixed} boots per variant"
        if self.look is None:
            return f"{head}; beyond this run's budget"
        return f"{head}; --until-decided likely stops by look {self.look} ({self.boots} each)"


def power_table(sd: float, design: Design, effect_s: float,
                power: float = POWER) -> list[PowerRow]:
    """Boots needed for the usual differences and `effect_s`, for boots spreading by `sd`."""
    rows = []
    for effect in sorted({*TABLE_EFFECTS_S, effect_s}):
        at = next((i for i, (n, a) in enumerate(zip(design.looks, design.alphas, strict=True))
                   if n >= boots_needed(sd, effect, a, power)), None)
        rows.append(PowerRow(effect, boots_needed(sd, effect, ALPHA, power),
                             None if at is None else at + 1,
                             None if at is None else design.looks[at]))
    return rows
