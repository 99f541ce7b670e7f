"""Statistics of repeated boots: summaries, Student's t, Welch's interval for a difference, and
the interval with the board as a block (`by_board`) for runs spread over several boards.

Everything is computed from scratch on the standard library: the t distribution through the
regularized incomplete beta function (a continued fraction), its quantile by bisection.
Times are seconds throughout; `describe` states a difference in milliseconds, plainly.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

_EPS = 1e-15
_TINY = 1e-300


@dataclass(frozen=True, slots=True)
class Summary:
    """Summary of one measurement over several boots (seconds)."""

    n: int
    median: float
    min: float
    max: float
    stdev: float | None
    """Sample standard deviation; None for fewer than two values."""


def summarize(values: Sequence[float]) -> Summary | None:
    """Summarize values; None when there are none."""
    if not values:
        return None
    stdev = statistics.stdev(values) if len(values) > 1 else None
    return Summary(len(values), statistics.median(values), min(values), max(values), stdev)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    limit = max(300, int(20 * math.sqrt(max(a, b))))
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, limit + 1):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (a={a}, b={b}, x={x})")


def _regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` (> 0, may be fractional or inf) degrees of freedom."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be > 0, not {df}")
    if math.isinf(df):
        return statistics.NormalDist().cdf(t)
    tail = 0.5 * _regularized_beta(df / (df + t * t), df / 2.0, 0.5)
    return 1.0 - tail if t > 0 else tail


def student_t_quantile(p: float, df: float) -> float:
    """The t such that P(T <= t) = p, for Student's t with `df` degrees of freedom.

    `df` may be fractional (Welch) or inf (the normal distribution). Solved by bisection on
    x = df / (df + t²) in I_x(df/2, 1/2) = 2·min(p, 1-p), to the precision of a float.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be strictly between 0 and 1, not {p}")
    if not df > 0:
        raise ValueError(f"degrees of freedom must be > 0, not {df}")
    if math.isinf(df):
        return statistics.NormalDist().inv_cdf(p)
    if p == 0.5:
        return 0.0
    target = 2.0 * min(p, 1.0 - p)
    low, high = 0.0, 1.0
    while True:
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if _regularized_beta(mid, df / 2.0, 0.5) < target:
            low = mid
        else:
            high = mid
    t = math.inf if mid == 0.0 else math.sqrt(df * (1.0 - mid) / mid)
    return t if p > 0.5 else -t


@dataclass(frozen=True, slots=True)
class Difference:
    """mean(b) - mean(a) with Welch's confidence interval (seconds)."""

    mean: float
    """Difference of the means: what the interval is about."""
    low: float
    high: float
    median_delta: float
    """Difference of the medians, as a point figure."""
    level: float
    """Confidence level of the interval, e.g. 0.95."""
    df: float | None
    """Welch–Satterthwaite degrees of freedom; None when degenerate."""
    n_a: int
    n_b: int
    boards: int = 1
    """Boards the difference was estimated within and pooled over (`by_board`); 1: Welch."""

    @property
    def degenerate(self) -> bool:
        """Both groups have no spread at all: the interval is the point itself."""
        return self.df is None

    @property
    def shown(self) -> bool:
        """The interval excludes zero: the data show a difference."""
        return self.low > 0.0 or self.high < 0.0


def difference(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> Difference | None:
    """Welch's t interval for mean(b) - mean(a); None unless each group has two values or more.

    When neither group varies at all the interval shrinks to the point (`degenerate`).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be strictly between 0 and 1, not {level}")
    n_a, n_b = len(a), len(b)
    if n_a < 2 or n_b < 2:
        return None
    mean = statistics.fmean(b) - statistics.fmean(a)
    median_delta = statistics.median(b) - statistics.median(a)
    share_a, share_b = statistics.variance(a) / n_a, statistics.variance(b) / n_b
    se2 = share_a + share_b
    if se2 == 0.0:
        return Difference(mean, mean, mean, median_delta, level, None, n_a, n_b)
    df = se2 * se2 / (share_a * share_a / (n_a - 1) + share_b * share_b / (n_b - 1))
    half = student_t_quantile(0.5 + level / 2.0, df) * math.sqrt(se2)
    return Difference(mean, mean - half, mean + half, median_delta, level, df, n_a, n_b)


def by_board(a: Sequence[float], b: Sequence[float], boards_a: Sequence[str],
             boards_b: Sequence[str], level: float = 0.95) -> Difference | None:
    """mean(b) - mean(a) with the board as a block: the difference estimated within each board,
    then pooled; Welch's interval (`difference`) when fewer than two boards hold both groups.

    `boards_a[i]` is the board of `a[i]` (likewise for b). Identical boards still differ in
    speed (a slower flash, another SoC bin); a run spread over them would see that as spread of
    each variant, widening its interval, unless the board is taken out as a block.

    Method: the two-way additive model y = board + variant + error (no interaction, one error
    variance σ²), fitted by least squares on the boots of the K boards that hold both groups
    (a board with one group only says nothing about the difference and is left out). For two
    groups its estimate is the mean of the per-board differences of means d_k weighted by
    w_k = n_ak·n_bk / (n_ak + n_bk), the inverse of var(d_k)/σ² (inverse-variance weights). σ²
    is the residual mean square: the spread within each board and group plus the boards'
    disagreement Σ w_k·(d_k − d)², over N − K − 1 degrees of freedom (N boots; K board means
    and one difference fitted). The interval is d ± t(N − K − 1)·σ/√Σw_k; `median_delta` is the
    per-board differences of medians, weighted alike. A board holding one boot of each group
    still counts (it adds to the estimate and to the degrees of freedom through the
    disagreement term).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be strictly between 0 and 1, not {level}")
    if len(boards_a) != len(a) or len(boards_b) != len(b):
        raise ValueError("one board per value is needed")
    cells: dict[str, tuple[list[float], list[float]]] = {}
    for values, names, side in ((a, boards_a, 0), (b, boards_b, 1)):
        for value, name in zip(values, names, strict=True):
            cells.setdefault(name, ([], []))[side].append(value)
    shared = [pair for pair in cells.values() if pair[0] and pair[1]]
    if len(shared) < 2:
        return difference(a, b, level)
    weights = [len(x) * len(y) / (len(x) + len(y)) for x, y in shared]
    total = sum(weights)
    deltas = [statistics.fmean(y) - statistics.fmean(x) for x, y in shared]
    mean = sum(w * d for w, d in zip(weights, deltas, strict=True)) / total
    median_delta = sum(w * (statistics.median(y) - statistics.median(x))
                       for w, (x, y) in zip(weights, shared, strict=True)) / total
    within = sum(sum((v - statistics.fmean(group)) ** 2 for v in group)
                 for pair in shared for group in pair)
    between = sum(w * (d - mean) ** 2 for w, d in zip(weights, deltas, strict=True))
    n_a, n_b = sum(len(x) for x, _ in shared), sum(len(y) for _, y in shared)
    df = n_a + n_b - len(shared) - 1
    se2 = (within + between) / df / total
    if se2 == 0.0:
        return Difference(mean, mean, mean, median_delta, level, None, n_a, n_b, len(shared))
    half = student_t_quantile(0.5 + level / 2.0, df) * math.sqrt(se2)
    return Difference(mean, mean - half, mean + half, median_delta, level, df, n_a, n_b,
                      len(shared))


def boots_text(diff: Difference) -> str:
    """`5+5 boots`, or `5+5 boots on 2 boards (blocked)` for a difference pooled over boards."""
    on = f" on {diff.boards} boards, blocked" if diff.boards > 1 else ""
    return f"{diff.n_a}+{diff.n_b} boots{on}"


def _ms(seconds: float, digits: int) -> str:
    value = round(seconds * 1000.0, digits)
    return f"{0.0:.{digits}f}" if value == 0 else f"{value:+.{digits}f}"


def describe(diff: Difference, label: str, milestone_title: str) -> str:
    """The difference as a plain sentence, e.g.

    `quiet: -412 ms to init (95% CI -450..-380 ms, 5+5 boots)`, or
    `quiet: no difference shown to init (95% CI -30..+25 ms, 5+5 boots)` when the interval
    spans zero. The figure is the difference of the means (what the interval is about).
    Milliseconds are whole from 10 ms up and have one decimal below (one precision per
    sentence, set by its largest figure).
    """
    boots = boots_text(diff)
    if diff.degenerate:
        if not diff.shown:
            return f"{label}: no difference to {milestone_title} (every boot identical, {boots})"
        digits = 0 if abs(diff.mean) >= 0.01 else 1
        return (f"{label}: {_ms(diff.mean, digits)} ms to {milestone_title} "
                f"(every boot identical: no interval, {boots})")
    figures = (diff.mean, diff.low, diff.high) if diff.shown else (diff.low, diff.high)
    digits = 0 if max(abs(f) for f in figures) >= 0.01 else 1
    ci = f"{diff.level * 100:.4g}% CI {_ms(diff.low, digits)}..{_ms(diff.high, digits)} ms"
    if diff.shown:
        return f"{label}: {_ms(diff.mean, digits)} ms to {milestone_title} ({ci}, {boots})"
    return f"{label}: no difference shown to {milestone_title} ({ci}, {boots})"
