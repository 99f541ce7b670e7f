"""Statistics: Student's t from scratch, Welch's interval, the plain sentences."""

from __future__ import annotations

import math
import statistics

import pytest

from bootlab.core.analysis.stats import (
    Difference,
    describe,
    difference,
    student_t_cdf,
    student_t_quantile,
    summarize,
)


@pytest.mark.parametrize(("df", "table"), [
    (1, 12.706), (2, 4.303), (4, 2.776), (8, 2.306), (10, 2.228), (30, 2.042),
    (1e6, 1.960), (math.inf, 1.960),
])
def test_t_quantile_matches_the_printed_table(df: float, table: float) -> None:
    assert student_t_quantile(0.975, df) == pytest.approx(table, abs=1e-3)


@pytest.mark.parametrize(("p", "df", "exact"), [
    (0.975, 1, 12.706204736174707),
    (0.975, 4, 2.7764451051977987),
    (0.975, 8, 2.3060041352041662),
    (0.975, 30, 2.0422724563012373),
    (0.995, 10, 3.169272672616951),
    (0.9, 5, 1.4758840488244813),
    (0.975, 0.5, 164.55767348048818),
])
def test_t_quantile_to_many_digits(p: float, df: float, exact: float) -> None:
    assert student_t_quantile(p, df) == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("p", [1e-9, 0.001, 0.1, 0.4, 0.5, 0.6, 0.975, 0.999, 1 - 1e-9])
def test_t_quantile_closed_forms_for_one_and_two_degrees(p: float) -> None:
    q = min(p, 1 - p)                                  # exact for floats near 0 and 1
    one = math.copysign(1 / math.tan(math.pi * q), p - 0.5) if p != 0.5 else 0.0
    assert student_t_quantile(p, 1) == pytest.approx(one, rel=1e-9)
    two = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    assert student_t_quantile(p, 2) == pytest.approx(two, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("df", [0.7, 1, 2.5, 7.27, 30, 400])
def test_t_quantile_inverts_the_cdf_and_is_symmetric(df: float) -> None:
    for p in (1e-6, 0.01, 0.2, 0.5, 0.75, 0.975, 0.999999):
        t = student_t_quantile(p, df)
        assert student_t_cdf(t, df) == pytest.approx(p, rel=1e-9)
        assert student_t_quantile(1 - p, df) == pytest.approx(-t, rel=1e-9, abs=1e-12)


def test_t_cdf_agrees_with_integrating_the_density() -> None:
    df, upper, steps = 3.5, 1.7, 20_000
    norm = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))

    def pdf(x: float) -> float:
        return norm * math.pow(1 + x * x / df, -(df + 1) / 2)

    h = upper / steps
    simpson = h / 3 * (pdf(0) + pdf(upper) + sum((4 if i % 2 else 2) * pdf(i * h)
                                                 for i in range(1, steps)))
    assert student_t_cdf(upper, df) == pytest.approx(0.5 + simpson, abs=1e-12)


@pytest.mark.parametrize(("p", "df"), [(0, 3), (1, 3), (-0.1, 3), (0.5, 0), (0.5, -2)])
def test_t_quantile_rejects_bad_arguments(p: float, df: float) -> None:
    with pytest.raises(ValueError):
        student_t_quantile(p, df)


A = [5.1, 5.3, 5.0, 5.2, 5.4]
B = [4.7, 4.8, 4.6, 4.9, 4.7]


def test_welch_interval_by_hand() -> None:
    # mean(B) - mean(A) = 4.74 - 5.2; variances 0.025 and 0.013 -> se² = 0.005 + 0.0026
    se2 = 0.025 / 5 + 0.013 / 5
    df = se2**2 / ((0.025 / 5) ** 2 / 4 + (0.013 / 5) ** 2 / 4)
    assert df == pytest.approx(7.274559193954662)
    half = student_t_quantile(0.975, df) * math.sqrt(se2)
    diff = difference(A, B)
    assert diff is not None
    assert diff.mean == pytest.approx(-0.46)
    assert diff.df == pytest.approx(df)
    assert (diff.low, diff.high) == pytest.approx((-0.46 - half, -0.46 + half))
    assert (diff.low, diff.high) == pytest.approx((-0.6645763860802624, -0.2554236139197376))
    assert diff.median_delta == pytest.approx(4.7 - 5.2)
    assert diff.shown and not diff.degenerate and (diff.n_a, diff.n_b) == (5, 5)
    assert describe(diff, "quiet", "init") == \
        "quiet: -460 ms to init (95% CI -665..-255 ms, 5+5 boots)"


def test_wider_level_gives_a_wider_interval() -> None:
    d95, d99 = difference(A, B), difference(A, B, level=0.99)
    assert d95 is not None and d99 is not None
    assert d99.low < d95.low < d95.high < d99.high
    assert describe(d99, "b", "x").startswith("b: -460 ms to x (99% CI ")


def test_no_difference_shown_when_the_interval_spans_zero() -> None:
    a = [4.100, 4.180, 4.050, 4.120, 4.140]
    b = [4.110, 4.090, 4.160, 4.130, 4.070]
    diff = difference(a, b)
    assert diff is not None and diff.low < 0 < diff.high and not diff.shown
    text = describe(diff, "quiet", "init")
    assert text.startswith("quiet: no difference shown to init (95% CI -")
    assert text.endswith(" ms, 5+5 boots)") and "..+" in text


def test_zero_variance_in_both_groups_is_degenerate() -> None:
    diff = difference([2.0, 2.0, 2.0], [1.5, 1.5])
    assert diff is not None and diff.degenerate and diff.df is None
    assert diff.low == diff.high == diff.mean == pytest.approx(-0.5) and diff.shown
    assert describe(diff, "fast", "login") == \
        "fast: -500 ms to login (every boot identical: no interval, 3+2 boots)"
    same = difference([1.0, 1.0], [1.0, 1.0])
    assert same is not None and not same.shown
    assert describe(same, "x", "login") == \
        "x: no difference to login (every boot identical, 2+2 boots)"


def test_zero_variance_in_one_group_uses_the_other() -> None:
    diff = difference([1.0, 1.0, 1.0], [1.1, 1.2, 1.3])
    assert diff is not None and diff.df == pytest.approx(2.0)
    half = student_t_quantile(0.975, 2) * statistics.stdev([1.1, 1.2, 1.3]) / math.sqrt(3)
    assert (diff.low, diff.high) == pytest.approx((0.2 - half, 0.2 + half))


def test_a_single_boot_gives_no_interval() -> None:
    assert difference([1.0], [1.0, 2.0]) is None
    assert difference([1.0, 2.0], [3.0]) is None
    assert difference([], []) is None
    with pytest.raises(ValueError):
        difference(A, B, level=1.0)


@pytest.mark.parametrize(("mean", "low", "high", "expected"), [
    (-0.412, -0.450, -0.380, "quiet: -412 ms to init (95% CI -450..-380 ms, 5+5 boots)"),
    (0.0042, 0.0011, 0.0073, "quiet: +4.2 ms to init (95% CI +1.1..+7.3 ms, 5+5 boots)"),
    (-0.003, -0.030, 0.025, "quiet: no difference shown to init (95% CI -30..+25 ms, 5+5 boots)"),
    (0.0004, -0.0031, 0.0039,
     "quiet: no difference shown to init (95% CI -3.1..+3.9 ms, 5+5 boots)"),
    (-0.020, -0.040, -0.00001, "quiet: -20 ms to init (95% CI -40..0 ms, 5+5 boots)"),
])
def test_describe_rounding(mean: float, low: float, high: float, expected: str) -> None:
    diff = Difference(mean, low, high, mean, 0.95, 8.0, 5, 5)
    assert describe(diff, "quiet", "init") == expected


def test_summarize_is_unchanged() -> None:
    s = summarize([3.0, 1.0, 2.0])
    assert s is not None and (s.n, s.median, s.min, s.max, s.stdev) == (3, 2.0, 1.0, 3.0, 1.0)
    one = summarize([1.5])
    assert one is not None and one.stdev is None
    assert summarize([]) is None
