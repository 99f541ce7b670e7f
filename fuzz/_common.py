"""Shared by the fuzz harnesses: running one under atheris, and reading session fixtures.

Each harness is a module with `one_input(data: bytes) -> None` that raises only on a bug: an
exception that is not the parser's own error type, or a broken invariant (AssertionError).
`python fuzz/fuzz_NAME.py [libFuzzer options] [CORPUS_DIR ...]` runs it under atheris, e.g.
`-runs=100000` or `-max_total_time=600`; `fuzz/campaign.py` runs them all.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SESSION_HEADER = b'{"format":"bootlab-session","version":1,"started":1700000000.0,"label":"x"}\n'
"""A valid header, so a harness can reach the record parser past line 1."""


def main(one_input: Callable[[bytes], None]) -> None:
    """Run `one_input` under atheris with the command line's libFuzzer options."""
    import atheris

    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
