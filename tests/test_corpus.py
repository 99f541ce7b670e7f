"""Milestones on real boards: the annotated corpus in ../shared/corpus, scored as a user would.

Every log is analysed by `bootlab analyze LOG --json` (in-process, the same code path); each
annotated milestone whose name maps to one of our ids must be found, its first occurrence on the
annotated line (1-based, counted on "\\n"). The per-log table and the overall figure are printed;
the test fails below 0.95.

The anchor, measured the same way in the same run: the marker strings LAVA, labgrid, tbot and
grabserial use (../shared/research/anchors.md, section d) as a profile of their own.
"""

from __future__ import annotations

import io
import json
import os
import tomllib
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile, parse_profile
from bootlab.core.capture.sources import open_source

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
TARGET = 0.95

# The corpus README's mapping of annotation names to milestone ids.
IDS = {
    "spl_banner": "spl", "bootloader_banner": "bootloader", "autoboot_prompt": "autoboot",
    "kernel_load_done": "kernel_loaded", "starting_kernel": "starting_kernel",
    "kernel_decompress_done": "decompressed", "booting_linux": "linux",
    "linux_version": "linux", "calibrate_delay": "calibrate", "root_wait": "root_wait",
    "ubi_attached": "ubi_attached", "root_mounted": "root_mounted",
    "free_kernel_memory": "kernel_done", "init_start": "init", "login_prompt": "login",
}

# What the tools we are measured against look for (anchors.md, "Regexes and markers real tools
# use"): LAVA's and labgrid's autoboot, kernel-start and login strings, tbot's autoboot and
# login regexes, grabserial's -m recipes.
ANCHOR_PROFILE = r"""
[profile]
name = "anchor"

[[milestone]]
id = "autoboot"
stage = "bootloader"
match = ['stop autoboot', 'autoboot:\s{0,5}\d{0,3}']

[[milestone]]
id = "starting_kernel"
stage = "bootloader"
match = ['Starting kernel']

[[milestone]]
id = "decompressed"
stage = "kernel"
match = ['Uncompressing Linux[^\n]{0,40}done,']

[[milestone]]
id = "linux"
stage = "kernel"
match = ['Linux version \d']

[[milestone]]
id = "login"
stage = "userspace"
match = ['login: ']
"""


@dataclass
class Score:
    """One log's result."""

    name: str
    right: int
    total: int
    misses: list[str]


def _expected(log: dict) -> dict[str, int]:
    """Milestone id -> annotated line (linux: the earlier of its two names)."""
    expected: dict[str, int] = {}
    for mark in log["milestone"]:
        ident = IDS.get(mark["name"])
        if ident is None:
            continue
        if ident in expected:
            if ident == "linux":
                expected[ident] = min(expected[ident], mark["line"])
            continue
        expected[ident] = mark["line"]
    return expected


def _score(name: str, expected: dict[str, int], found: dict[str, list[int]]) -> Score:
    misses = [f"{ident} {line}->{found.get(ident, ['-'])[0]}"
              for ident, line in expected.items() if found.get(ident, [None])[0] != line]
    return Score(name, len(expected) - len(misses), len(expected), misses)


def _bootlab(path: Path) -> dict[str, list[int]]:
    """`bootlab analyze PATH --json`: each milestone id's lines, in order."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["analyze", str(path), "--json"])
    assert code == 0, path
    found: dict[str, list[int]] = {}
    for milestone in json.loads(out.getvalue())["milestones"]:
        found.setdefault(milestone["id"], []).append(milestone["line"])
    return found


def _anchor(path: Path) -> dict[str, list[int]]:
    profile = parse_profile(ANCHOR_PROFILE, "anchor")
    source = open_source(path)
    found: dict[str, list[int]] = {}
    for milestone in analyze(source.data, profile, source.line_time).milestones:
        found.setdefault(milestone.id, []).append(milestone.line)
    return found


def _table(scores: list[Score], anchor: list[Score]) -> str:
    lines = [f"{'log':<70} {'bootlab':>8} {'anchor':>8}  misses"]
    for ours, theirs in zip(scores, anchor, strict=True):
        lines.append(f"{ours.name[:70]:<70} {ours.right:>3}/{ours.total:<4} "
                     f"{theirs.right:>3}/{theirs.total:<4}  {', '.join(ours.misses)}")
    right, total = sum(s.right for s in scores), sum(s.total for s in scores)
    theirs = sum(s.right for s in anchor)
    lines.append(f"anchor (LAVA, labgrid, tbot, grabserial markers): {theirs}/{total} = "
                 f"{theirs / total:.3f}   bootlab: {right}/{total} = {right / total:.3f}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    index = CORPUS / "index.toml"
    if not index.is_file():
        if os.environ.get("BOOTLAB_REQUIRE_CORPUS"):
            pytest.fail(f"the real-board corpus is missing: {index}")
        pytest.skip(f"the real-board corpus is not here: {index}")
    return list(tomllib.loads(index.read_text(encoding="utf-8"))["log"])


def test_milestones_land_on_the_annotated_lines(corpus: list[dict],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    scores, anchor = [], []
    for log in corpus:
        path = CORPUS / "logs" / log["file"]
        expected = _expected(log)
        scores.append(_score(log["file"], expected, _bootlab(path)))
        anchor.append(_score(log["file"], expected, _anchor(path)))
    table = _table(scores, anchor)
    with capsys.disabled():
        print("\n" + table)
    right, total = sum(s.right for s in scores), sum(s.total for s in scores)
    assert total > 0
    assert right / total >= TARGET, table
    assert right > sum(s.right for s in anchor)


def test_a_capture_of_several_real_boots_keeps_each_boots_milestones(corpus: list[dict]) -> None:
    # Three real captures back to back, as a reboot loop records them (the board resets with
    # no restart line): each boot's milestones are exactly those of its log alone, on the same
    # lines shifted by the lines before it, none taken from the boot before or after.
    names = ["039-", "032-", "044-", "039-"]
    paths = [next((CORPUS / "logs").glob(f"{name}*")) for name in names]
    profile = load_profile("linux")
    logs = [path.read_bytes() for path in paths]
    logs = [log if log.endswith(b"\n") else log + b"\n" for log in logs]
    alone = [analyze(log, profile) for log in logs]
    together = analyze(b"".join(logs), profile)
    assert len(together.boots) == len(paths)
    shift = 0
    for boot, single, log, path in zip(together.boots, alone, logs, paths, strict=True):
        (only,) = single.boots
        assert [(m.id, m.line - shift) for m in boot.milestones] == \
            [(m.id, m.line) for m in only.milestones], path.name
        shift += log.count(b"\n")
