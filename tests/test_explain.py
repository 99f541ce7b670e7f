"""`bootlab analyze --explain`: the nearest lines to each missing milestone, why each was not
taken, and a profile snippet that, added, makes the line the milestone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.core.analysis.explain import explain
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile

# EcoNet bootbase of a ZTE gateway (a real capture outside the corpus): its boot-mode menu is
# its autoboot prompt, in words no rule knows.
ZTE = [
    "EN7512 at Fri Sep 13 15:03:51 CST 2019 version 1.1 free bootbase",
    "board ip address:192.168.1.254",
    "*** Press 1 means entering boot mode***",
    "*** Press 2 means entering testing mode***",
    "..........",
    "Found image at 0x00200000",
    "Uncompressing [LZMA] ...  done.",
    "Linux version 2.6.36 (root@dc6a70feb7e6) (gcc version 4.3.6 (Buildroot 2012.05) ) #1 SMP",
]


def _log(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "boot.log"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path


def test_an_unknown_wording_is_shown_with_a_snippet_that_then_finds_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    log = _log(tmp_path, ZTE)
    assert main(["analyze", str(log), "--explain"]) == 0
    out = capsys.readouterr().out
    assert ("autoboot (Autoboot countdown), looked after bootloader (line 1) before "
            "kernel_loaded (line 7):") in out
    assert "line 3: '*** Press 1 means entering boot mode***'" in out
    assert "no autoboot pattern matches this wording" in out
    # the snippet, as printed, added to the user's profile, makes the line the milestone
    snippet = out.split("to take line 3 as autoboot, add to your profile (")[1]
    target = Path(snippet.split(")", 1)[0])
    body = "\n".join(line[6:] for line in snippet.split("\n")[1:] if line.startswith("      "))
    target.parent.mkdir(parents=True)
    target.write_text(body + "\n")
    assert main(["analyze", str(log), "--json"]) == 0
    found = {m["id"]: m["line"] for m in json.loads(capsys.readouterr().out)["milestones"]}
    assert found["autoboot"] == 3
    assert found["kernel_loaded"] == 7      # the built-in lines are still there (merge)


def test_a_refused_hit_says_why(tmp_path: Path) -> None:
    # only the device tree is read (the kernel runs from flash): its read is not the kernel's
    data = (b"U-Boot 2020.01 (Jan 06 2020 - 10:00:00 +0000)\n"
            b"reading board.dtb\n"
            b"36164 bytes read in 5 ms (6.9 MiB/s)\n"
            b"Starting kernel ...\n")
    analysis = analyze(data, load_profile("linux"))
    missing = {m.id: m for m in explain(analysis, data)}
    (candidate,) = missing["kernel_loaded"].candidates
    assert candidate.line == 3
    assert "load 'board.dtb' matches" in candidate.reason


def test_text_before_an_anchored_pattern_is_named(tmp_path: Path) -> None:
    # two CPUs printing at once: another message's tail glued before the kernel's line
    data = (b"Starting kernel ...\n[    0.000000] Linux version 6.1.0 (a@b) (gcc) #1\n"
            b"[    1.500000] mmc0: new card VFS: Mounted root (ext4 filesystem) on device 179:2.\n")
    analysis = analyze(data, load_profile("linux"))
    missing = {m.id: m for m in explain(analysis, data)}
    (candidate,) = missing["root_mounted"].candidates
    assert candidate.line == 3
    assert candidate.reason.startswith("'mmc0: new card' comes before the text")


def test_explain_in_json_and_nothing_missing(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path, ZTE)
    assert main(["analyze", str(log), "--explain", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_id = {item["id"]: item for item in data["explain"]}
    assert by_id["autoboot"]["candidates"][0]["line"] == 3
    assert by_id["autoboot"]["suggested_line"] == 3
    assert "merge = true" in by_id["autoboot"]["suggestion"]
    assert by_id["spl"]["candidates"] == []
