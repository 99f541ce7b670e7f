"""The board's own clock on the host's (bootlab/core/analysis/boardclock.py): every pair of
anchors is checked, not only neighbours, and anchors that disagree bound nothing."""

from __future__ import annotations

from itertools import pairwise

import pytest

from bootlab.core.analysis.boardclock import DRIFT, Anchor, BoardClock, judge

EARLY_S = 0.01
"""Each anchor may have happened up to this much before it arrived."""


def steps(host_per_board_s: float, count: int = 5) -> list[Anchor]:
    """Anchors one board second apart, `host_per_board_s` host seconds apart."""
    return [Anchor(float(i), 100.0 + i * host_per_board_s, EARLY_S, f"line {i}")
            for i in range(count)]


def test_a_clock_that_keeps_time_places_between_its_anchors() -> None:
    clock = judge(steps(1.0), "")
    assert clock.keeps_time and clock.bounded
    bounds = clock.bounds(2.5)
    assert bounds is not None and bounds[0] <= 102.5 <= bounds[1]


def test_a_gain_each_neighbour_excuses_is_found_between_far_anchors() -> None:
    """0.5 % fast: each step hides in the anchors' 10 ms slack, three steps do not. A clock
    running fast breaks the bound every placement rests on, so it bounds nothing."""
    anchors = steps(0.995)
    for a, b in pairwise(anchors):                         # each neighbour agrees
        assert b.host_s - (a.host_s - a.early_s) >= (b.board_s - a.board_s) * (1 - DRIFT)
    clock = judge(anchors, "")
    assert not clock.keeps_time and not clock.bounded
    assert clock.why.startswith("the board's clock ran at 1.005x the host's pace between "
                                "line 0 and line 3") and clock.why.endswith("nothing bounds it")
    assert clock.bounds(2.5) is None and clock.place(2.5) is None


def test_a_loss_each_neighbour_excuses_is_found_between_far_anchors() -> None:
    """0.5 % slow: the clock does not keep time, but still bounds a time from both sides."""
    clock = judge(steps(1.005), "")
    assert not clock.keeps_time and clock.bounded
    assert clock.why == "the board's clock ran at 0.995x the host's pace between line 0 and " \
                        "line 3"
    bounds = clock.bounds(2.5)
    assert bounds is not None and bounds[0] <= 100.0 + 2.5 * 1.005 <= bounds[1]


@pytest.mark.parametrize("keeps_time", [True, False])
def test_anchors_that_disagree_bound_nothing_rather_than_a_point(keeps_time: bool) -> None:
    """An earlier anchor that says "not before 101.2" and a later one that says "not after
    101.0" gave an empty interval, placed at its middle with ±0 ms. It is no place at all."""
    clock = BoardClock((Anchor(0.0, 100.2, 0.0, "a"), Anchor(2.0, 102.0, 0.0, "b")),
                       keeps_time, "given")
    assert clock.bounds(1.0) is None and clock.place(1.0) is None
