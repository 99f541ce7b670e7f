"""Shared by the fuzz harnesses: running one under atheris, a scratch file, a session header.

Each harness is a module with `one_input(data: bytes) -> None` that raises only on a bug: an
exception that is not the parser's own error type, or a broken invariant (AssertionError).
`python fuzz/fuzz_NAME.py [libFuzzer options] [CORPUS_DIR ...]` runs it under atheris, e.g.
`-runs=100000` or `-max_total_time=600`; `fuzz/campaign.py` runs them all.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SESSION_HEADER = b'{"format":"bootlab-session","version":1,"started":1700000000.0,"label":"x"}\n'
"""A valid header, so a harness can reach the record parser past line 1."""


def scratch_file(name: str) -> Path:
    """A file named `name` in a new temporary folder, for a parser that reads a path."""
    return Path(tempfile.mkdtemp(prefix="bootlab-fuzz-")) / name


def main(one_input: Callable[[bytes], None], scratch: Path | None = None) -> None:
    """Run `one_input` under atheris with the command line's libFuzzer options; `scratch` (from
    `scratch_file`) and its folder are removed when the fuzzer returns or raises (libFuzzer
    ending the process with exit() at the end of its runs leaves them in the temp folder)."""
    import atheris

    try:
        atheris.Setup(sys.argv, one_input)
        atheris.Fuzz()
    finally:
        if scratch is not None:
            scratch.unlink(missing_ok=True)
            os.rmdir(scratch.parent)
