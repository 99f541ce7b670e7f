"""How many inputs each parser was tried with, printed in pytest's closing summary.

A fuzz test uses the `fuzz_counts` fixture (tests/fuzz/conftest.py: it registers `Summary`)
and calls `count(parser)` once per input; the totals (hypothesis examples and atheris runs, by
parser) close the pytest output.
"""

from __future__ import annotations

from collections import Counter

import pytest

TRIED: Counter[str] = Counter()
"""Inputs tried per parser in this pytest run."""


def count(parser: str, inputs: int = 1) -> None:
    """Note that `parser` was tried with `inputs` more inputs."""
    TRIED[parser] += inputs


class Summary:
    """A pytest plugin printing TRIED at the end of the run."""

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not TRIED:
            return
        terminalreporter.section("fuzz inputs tried per parser")
        for parser, inputs in sorted(TRIED.items()):
            terminalreporter.line(f"{parser:42} {inputs:>10,}")
