"""`bootlab settings`: the settings and their keys; with --from, their states in a boot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import example_sessions

from bootlab.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rows(out: str) -> dict[str, list[str]]:
    """The table's rows by setting id: state, then the rest split on runs of blanks."""
    lines = out.splitlines()
    assert lines[0].split() == ["key", "setting", "state", "value", "source", "why"]
    return {line.split()[1]: line.split()[2:] for line in lines[1:]}


def test_settings_lists_keys_without_a_log(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "settings")
    assert code == 0
    assert out.splitlines()[0].split()[:3] == ["d", "bootdelay", "uboot_var"]


def test_settings_from_a_session_prints_states_and_evidence(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "settings", "--from", str(example_sessions("default")[0]))
    assert code == 0 and err == ""
    table = rows(out)
    assert table["bootdelay"][:3] == ["off", "2", "log"]
    assert "the autoboot countdown started at 2" in " ".join(table["bootdelay"])
    assert table["printk_time"][:3] == ["on", "log", "78"]
    assert "kernel default (CONFIG_PRINTK_TIME)" in " ".join(table["printk_time"])
    assert table["baudrate"][:3] == ["on", "115200", "session"]
    assert table["lpj"][0] == "n/a" and "calibration is skipped" in " ".join(table["lpj"])
    assert table["cmdline_extra"][0] == "unknown"


def test_settings_from_a_quiet_session_json(capsys: pytest.CaptureFixture[str]) -> None:
    path = example_sessions("quiet")[0]
    code, out, _ = run(capsys, "settings", "--from", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["source"] == {"path": str(path), "kind": "session"}
    by_id = {row["id"]: row for row in data["settings"]}
    quiet = by_id["quiet"]
    assert (quiet["state"], quiet["how"], quiet["line"], quiet["text"]) == (
        "on", "inferred", 76, "Starting kernel ...")
    assert by_id["rootwait"]["how"] == "session" and by_id["rootwait"]["state"] == "on"
    assert by_id["bootdelay"]["value"] == "2" and by_id["bootdelay"]["against"] == []


def test_settings_from_a_plain_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "boot.log"
    log.write_bytes(b"U-Boot 2016.01 (Jan 01 2020)\r\nHit any key to stop autoboot:  3 \b\b\b 2 "
                    b"\b\b\b 1 \b\b\b 0 \r\n\r\nStarting kernel ...\r\n\r\n"
                    b"Booting Linux on physical CPU 0x0\r\n"
                    b"Kernel command line: console=ttyS0,115200 loglevel=7\r\n")
    code, out, _ = run(capsys, "settings", "--from", str(log))
    assert code == 0
    table = rows(out)
    assert table["bootdelay"][:4] == ["off", "3", "log", "2"]
    assert table["loglevel"][:4] == ["off", "7", "log", "7"]
    assert table["printk_time"][:3] == ["off", "log", "6"]  # kernel lines without stamps


def test_settings_from_a_missing_file_is_exit_2(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    code, out, err = run(capsys, "settings", "--from", str(tmp_path / "nope.log"))
    assert code == 2 and out == "" and "no such file" in err
