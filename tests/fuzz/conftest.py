"""Fixtures of the fuzz tests: the per-parser count of inputs tried, printed at the end."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from support.fuzzcount import TRIED, Summary


@pytest.fixture(scope="session", autouse=False)
def fuzz_counts(pytestconfig: pytest.Config) -> Iterator[Counter[str]]:
    """Register the summary once; yield the counter."""
    if not pytestconfig.pluginmanager.has_plugin("bootlab-fuzz-summary"):
        pytestconfig.pluginmanager.register(Summary(), "bootlab-fuzz-summary")
    yield TRIED
