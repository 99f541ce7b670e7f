"""Summary statistics of repeated boots: median, spread, count."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


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
