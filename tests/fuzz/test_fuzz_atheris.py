"""A bounded run of every atheris harness in `fuzz/` (coverage-guided, from the seeds).

Each runs in its own process for a fixed number of inputs; a crash (an unexpected exception or
a broken invariant) fails the test with the harness's report. Longer campaigns:
`python fuzz/campaign.py --seconds 600`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
from support.fuzzcount import count
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "fuzz"))
from campaign import run

pytestmark = pytest.mark.usefixtures("fuzz_counts")
RUNS = {"lines": 100000, "stamps": 30000, "session": 8000, "sources": 400, "config": 8000}
"""Inputs per harness: about 5 s each on the development VM."""


@pytest.fixture(scope="module")
def atheris_installed() -> None:
    if importlib.util.find_spec("atheris") is None:
        if os.environ.get("CI"):
            pytest.fail("atheris is not installed (pip install -e '.[test]')")
        pytest.skip("atheris is not installed (pip install -e '.[test]')")


@pytest.mark.usefixtures("atheris_installed")
@pytest.mark.parametrize("name", sorted(RUNS))
def test_harness_survives_its_inputs(name: str, tmp_path: Path) -> None:
    result = run(name, runs=RUNS[name], timeout_s=240, crashes=tmp_path)
    assert result.ok, result.output[-6000:]
    assert result.runs >= RUNS[name]
    count(f"atheris fuzz_{name}", result.runs)
