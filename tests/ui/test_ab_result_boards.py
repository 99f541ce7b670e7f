"""The A/B result screen of a run spread over two boards: the medians per board, and that the
statistics are blocked by board (bootlab/ui/screens/ab_result.py)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from bootlab.control.abrun import ABReport
from bootlab.core.analysis.compare import Column, make_judging
from bootlab.ui.screens.ab_result import result_text


def rendered(report: ABReport) -> str:
    console = Console(width=200, record=True)
    console.print(result_text(report))
    return console.export_text()


def columns(boards: list[str]) -> list[Column]:
    return [Column(name, 4, {"login": values}, {"login": boards})
            for name, values in (("base", [5.0, 5.02, 5.3, 5.33]),
                                 ("quiet", [4.8, 4.81, 5.1, 5.12]))]


def test_two_boards_show_their_medians_and_the_blocking() -> None:
    cols = columns(["a", "a", "b", "b"])
    report = ABReport("r", Path("ab-r.json"), ("base", "quiet"), tuple(cols), ("login",), (),
                      judging=make_judging(cols, ["login"], "login", 0.05))
    text = rendered(report)
    assert "4+4 boots, interleaved on 2 boards, blocked by board" in text
    assert "medians per board (the differences are estimated within each board" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("login")
               and "5.010 s" in line)
    assert row.split()[1::2] == ["5.010", "4.805", "5.315", "5.110"]
    assert "base@a" in text and "quiet@b" in text
    assert "on 2 boards, blocked)" in text                    # the verdict says it too


def test_one_board_shows_no_board_table() -> None:
    cols = columns(["a"] * 4)
    report = ABReport("r", Path("ab-r.json"), ("base", "quiet"), tuple(cols), ("login",), (),
                      judging=make_judging(cols, ["login"], "login", 0.05))
    text = rendered(report)
    assert "medians per board" not in text and "blocked" not in text and "@a" not in text
