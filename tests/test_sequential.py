"""Runs that stop when the answer is known (bootlab/core/analysis/sequential.py): the looks and
their alpha, the verdicts, the boots a difference needs, and by simulation that the design keeps
its error rate where peeking at a 95% interval after every round does not."""

from __future__ import annotations

import random

import pytest

from bootlab.core.analysis.sequential import (
    ALPHA,
    Design,
    Look,
    boots_needed,
    judge,
    look,
    parse_effect,
    pooled_sd,
    power_table,
    spending,
    verdict_text,
)
from bootlab.core.analysis.stats import difference

SD = 0.05
"""Spread of the simulated boots (seconds), as the QEMU board's login time spreads."""


def simulate(design: Design, rng: random.Random, delta: float, effect_s: float) -> Look:
    """One run: balanced boots added up to each look until a look decides or the budget ends."""
    base: list[float] = []
    other: list[float] = []
    for index, boots in enumerate(design.looks):
        while len(base) < boots:
            base.append(rng.gauss(5.0, SD))
            other.append(rng.gauss(5.0 + delta, SD))
        result = look(design, index, base, other, effect_s)
        if result.decided or result.final:
            return result
    raise AssertionError("the last look is final")


def test_looks_are_capped_by_the_budget_and_spend_alpha_in_proportion() -> None:
    design = spending(40)
    assert design.looks == (3, 5, 8, 12, 18, 27, 40)
    assert sum(design.alphas) == pytest.approx(ALPHA)
    assert design.alphas[0] == pytest.approx(ALPHA * 3 / 40)
    assert design.alphas[-1] == pytest.approx(ALPHA * 13 / 40)
    assert spending(10).looks == (3, 5, 8, 10)
    assert spending(8).looks == (3, 5, 8)
    assert spending(2).looks == (2,)
    two = spending(12, comparisons=2)                  # two variants against the first
    assert sum(two.alphas) == pytest.approx(ALPHA / 2)
    with pytest.raises(ValueError, match="two boots a side"):
        spending(1)


def test_no_true_difference_keeps_the_error_rate_where_naive_peeking_does_not() -> None:
    honest = spending(12)
    naive = Design(honest.looks, (ALPHA,) * len(honest.looks))   # 95% at every look
    rng = random.Random(2000)
    wrong = {"honest": 0, "naive": 0}
    runs = 1000
    for _ in range(runs):
        state = rng.getstate()
        for name, design in (("honest", honest), ("naive", naive)):
            rng.setstate(state)                         # the same boots for both
            # an effect too small to show equivalence: every run looks until it errs or ends
            if simulate(design, rng, 0.0, 0.001).verdict in ("faster", "slower"):
                wrong[name] += 1
    assert wrong["honest"] / runs < 0.07
    assert wrong["naive"] / runs > 0.1


def test_a_large_true_effect_stops_at_the_first_looks() -> None:
    design = spending(40)
    rng = random.Random(7)
    looks = [simulate(design, rng, -0.5, 0.05) for _ in range(200)]   # 10 sd faster
    assert all(result.verdict == "faster" for result in looks)
    assert all(result.number <= 2 for result in looks)
    assert sum(result.number == 1 for result in looks) > 150


def test_no_true_difference_with_a_wide_effect_ends_within() -> None:
    design = spending(40)
    rng = random.Random(11)
    looks = [simulate(design, rng, 0.0, 0.2) for _ in range(100)]     # ±4 sd matters
    assert sum(result.verdict == "within" for result in looks) >= 95
    assert max(result.number for result in looks) <= 3


def test_verdicts_from_an_interval() -> None:
    faster = difference([5.0, 5.1, 5.2], [4.0, 4.1, 4.2])
    within = difference([5.0, 5.01, 5.02, 4.99], [5.0, 5.02, 5.01, 4.98])
    wide = difference([5.0, 5.5, 4.5], [5.0, 5.6, 4.4])
    assert faster is not None and within is not None and wide is not None
    assert judge(faster, 0.05) == "faster"
    assert judge(difference([4.0, 4.1, 4.2], [5.0, 5.1, 5.2]), 0.05) == "slower"
    assert judge(within, 0.05) == "within"
    assert judge(wide, 0.05) == "undecided"
    assert judge(None, 0.05) == "undecided"
    assert verdict_text("faster", faster, "quiet", "login", 0.05).startswith(
        "quiet: faster to login by 1000 ms (95% CI ")
    assert "within ±50 ms" in verdict_text("within", within, "quiet", "login", 0.05)
    assert "more boots would tell" in verdict_text("undecided", wide, "quiet", "login", 0.05)
    shown = look(spending(5), 0, [5.0, 5.1, 5.2], [4.0, 4.1, 4.2], 0.05)
    assert shown.text(0.05) == ("look 1 (3 boots each, 97% CI): -1000 ms "
                                "[-1269, -731], faster")


@pytest.mark.parametrize(("text", "seconds"), [("50ms", 0.05), ("0.05s", 0.05), ("2s", 2.0),
                                                ("12.5 ms", 0.0125)])
def test_effect_durations(text: str, seconds: float) -> None:
    assert parse_effect(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["50", "0ms", "-5ms", "fast", "5 min"])
def test_bad_effect_durations(text: str) -> None:
    with pytest.raises(ValueError, match="effect"):
        parse_effect(text)


def test_boots_needed_is_the_normal_approximation() -> None:
    # 2·((1.95996 + 0.84162)·sd/effect)² = 15.7 for sd = effect: 16 boots per variant
    assert boots_needed(0.05, 0.05) == 16
    assert boots_needed(0.05, 0.1) == 4
    assert boots_needed(0.05, 2.0) == 2                    # never under two a side
    assert boots_needed(0.05, 0.05, power=0.9) > boots_needed(0.05, 0.05)


def test_pooled_spread_and_the_power_table() -> None:
    assert pooled_sd([[1.0, 1.2], [3.0, 3.2], [9.0]]) == pytest.approx(0.1414213562)
    assert pooled_sd([[1.0], []]) is None
    rows = {round(row.effect_s * 1000): row for row in power_table(0.05, spending(40), 0.03)}
    assert sorted(rows) == [20, 30, 50, 100, 200, 500, 1000, 2000]
    assert rows[50].fixed == 16 and rows[50].look is not None
    assert rows[50].boots is not None and rows[50].boots >= 16   # spent alpha costs boots
    assert rows[20].look is None and "beyond this run's budget" in rows[20].text()
    assert rows[500].look == 1 and "likely stops by look 1 (3 each)" in rows[500].text()
