"""The board as a block (bootlab/core/analysis/stats.py `by_board`): the least-squares fit of
the additive model, Welch's interval for one board, and by simulation that with one board
300 ms slower the blocked interval is far narrower than the unblocked one and covers the true
difference at its nominal level; a sequential run over boards keeps its error rate."""

from __future__ import annotations

import random
import statistics

import pytest

from bootlab.core.analysis.compare import Column, board_table, to_json, to_text
from bootlab.core.analysis.sequential import ALPHA, look, spending
from bootlab.core.analysis.stats import by_board, describe, difference, student_t_quantile

SD = 0.05
"""Spread of a simulated board's boots (seconds)."""
SLOWER = 0.3
"""How much slower the second simulated board is."""
TRUE = -0.1
"""The simulated variant's true difference."""


def simulated_run(rng: random.Random, rounds: int, delta: float
                  ) -> tuple[list[float], list[float], list[str]]:
    """Balanced rounds alternating between board A and board B (B slower): per round one boot
    of each variant on that round's board. Returns base, other and each round's board."""
    base: list[float] = []
    other: list[float] = []
    boards: list[str] = []
    for run in range(rounds):
        board = "AB"[run % 2]
        offset = SLOWER if board == "B" else 0.0
        base.append(rng.gauss(5.0 + offset, SD))
        other.append(rng.gauss(5.0 + offset + delta, SD))
        boards.append(board)
    return base, other, boards


def test_one_board_is_welch() -> None:
    a, b = [5.1, 5.3, 5.0, 5.2], [4.7, 4.8, 4.6]
    assert by_board(a, b, ["x"] * 4, ["x"] * 3) == difference(a, b)
    # a board holding one group only leaves one shared board: Welch over all the boots
    assert by_board(a, b, ["x", "x", "y", "y"], ["x"] * 3) == difference(a, b)


def test_the_estimate_is_the_least_squares_fit_of_board_plus_variant() -> None:
    a = [5.10, 5.14, 5.07, 5.40, 5.46]
    b = [5.00, 4.96, 5.31, 5.37, 5.29, 5.35]
    boards_a, boards_b = ["p", "p", "p", "q", "q"], ["p", "p", "q", "q", "q", "q"]
    diff = by_board(a, b, boards_a, boards_b, 0.9)
    assert diff is not None and diff.boards == 2 and (diff.n_a, diff.n_b) == (5, 6)

    def rss(tau: float) -> float:
        """Residual sum of squares of y = board + tau·[b], each board's mean fitted."""
        total = 0.0
        for board in "pq":
            ys = [y for y, at in zip(a, boards_a, strict=True) if at == board] + \
                [y - tau for y, at in zip(b, boards_b, strict=True) if at == board]
            total += sum((y - statistics.fmean(ys)) ** 2 for y in ys)
        return total

    # tau minimises the residuals; sigma² is them over N - boards - 1 degrees of freedom
    assert rss(diff.mean) < rss(diff.mean + 1e-4) and rss(diff.mean) < rss(diff.mean - 1e-4)
    assert diff.df == 11 - 2 - 1
    weights = [3 * 2 / 5, 2 * 4 / 6]                  # n_a·n_b/(n_a+n_b) per board
    se = (rss(diff.mean) / diff.df / sum(weights)) ** 0.5
    half = student_t_quantile(0.95, diff.df) * se
    assert (diff.low, diff.high) == pytest.approx((diff.mean - half, diff.mean + half))
    within_p = statistics.fmean([5.00, 4.96]) - statistics.fmean([5.10, 5.14, 5.07])
    within_q = statistics.fmean([5.31, 5.37, 5.29, 5.35]) - statistics.fmean([5.40, 5.46])
    assert diff.mean == pytest.approx((weights[0] * within_p + weights[1] * within_q)
                                      / sum(weights))
    # the boards' 300 ms make the unblocked difference meaningless: it mixes them
    assert difference(a, b).mean == pytest.approx(statistics.fmean(b) - statistics.fmean(a))
    assert "5+6 boots on 2 boards, blocked" in describe(diff, "quiet", "login")


def test_identical_boots_per_board_give_the_point() -> None:
    diff = by_board([5.0, 5.0, 5.3, 5.3], [4.9, 4.9, 5.2, 5.2], list("aabb"), list("aabb"))
    assert diff is not None and diff.degenerate and diff.mean == pytest.approx(-0.1)


def test_a_slower_board_is_no_spread_once_blocked_and_coverage_holds() -> None:
    rng = random.Random(14)
    runs, covered_blocked, covered_welch = 1000, 0, 0
    widths_blocked, widths_welch = [], []
    for _ in range(runs):
        base, other, boards = simulated_run(rng, 5, TRUE)   # 3 rounds on A, 2 on B
        blocked = by_board(base, other, boards, boards)
        welch = difference(base, other)
        assert blocked is not None and welch is not None and blocked.df == 10 - 2 - 1
        covered_blocked += blocked.low <= TRUE <= blocked.high
        covered_welch += welch.low <= TRUE <= welch.high
        widths_blocked.append(blocked.high - blocked.low)
        widths_welch.append(welch.high - welch.low)
    ratio = statistics.median(widths_blocked) / statistics.median(widths_welch)
    print(f"coverage blocked {covered_blocked / runs:.3f}, unblocked {covered_welch / runs:.3f};"
          f" width ratio {ratio:.2f}")
    assert 0.93 <= covered_blocked / runs <= 0.97            # nominal 95%
    assert ratio < 0.4                                       # much narrower
    assert covered_welch / runs > 0.99                       # unblocked: the boards' spread


def test_a_sequential_run_over_boards_keeps_its_error_rate() -> None:
    design = spending(12)
    rng = random.Random(12)
    runs, wrong = 600, 0
    for _ in range(runs):
        base, other, boards = simulated_run(rng, 12, 0.0)
        for index, boots in enumerate(design.looks):
            result = look(design, index, base[:boots], other[:boots], 0.01, boards[:boots],
                          boards[:boots])
            assert result.diff is not None and result.diff.boards == 2
            if result.decided or result.final:
                wrong += result.verdict in ("faster", "slower")
                break
    assert wrong / runs <= ALPHA


def test_compare_shows_medians_per_board_and_says_blocked() -> None:
    base = Column("base", 4, {"login": [5.0, 5.02, 5.3, 5.32]},
                  {"login": ["a", "a", "b", "b"]})
    quiet = Column("quiet", 4, {"login": [4.8, 4.83, 5.1, 5.12]},
                   {"login": ["a", "a", "b", "b"]})
    text = to_text([base, quiet], ["login"])
    table = board_table([base, quiet], ["login"])
    assert table[0].startswith("medians per board") and table[0] in text
    assert table[1].split() == ["milestone", "base@a", "(2)", "quiet@a", "(2)", "base@b", "(2)",
                                "quiet@b", "(2)"]
    assert table[2].split() == ["login", "5.010", "4.815", "5.310", "5.110"]
    assert "confidence interval, blocked by board: estimated within each board" in text
    assert "2+2 boots on 2 boards, blocked" not in text and "4+4 boots on 2 boards, blocked" \
        in text
    cell = to_json([base, quiet], ["login"])["milestones"][0]["columns"][1]
    assert cell["by_board"] == {"a": {"n": 2, "median_s": pytest.approx(4.815)},
                                "b": {"n": 2, "median_s": pytest.approx(5.11)}}
    assert cell["difference"]["boards"] == 2
    # one board: the text and JSON as before
    one = Column("base", 2, {"login": [5.0, 5.02]}, {"login": ["a", "a"]})
    other = Column("quiet", 2, {"login": [4.8, 4.83]}, {"login": ["a", "a"]})
    assert board_table([one, other], ["login"]) == []
    assert "boards" not in to_json([one, other], ["login"])["milestones"][0]["columns"][1][
        "difference"]
