"""`bootlab record` on the real QEMU board: genuine U-Boot 2023.01 and Linux 6.1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.paths import BOOTLAB

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.sources import open_source

pytestmark = pytest.mark.board


def test_records_a_cold_boot_to_the_login_prompt(board_url: str, tmp_path: Path) -> None:
    result = subprocess.run([*BOOTLAB, "record", board_url, "--until", "login", "--timeout",
                             "120", "--label", "ci", "--board", "qemu", "--sessions",
                             str(tmp_path)], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert "U-Boot 2023.01" in result.stdout          # the console, stamped, on stdout
    (path,) = tmp_path.glob("*.jsonl")
    source = open_source(path)
    analysis = analyze(source.data, load_profile("linux"), source.line_time)
    (boot,) = analysis.boots
    ids = [m.id for m in boot.milestones]
    for wanted in ("bootloader", "autoboot", "kernel_loaded", "starting_kernel", "linux",
                   "calibrate", "kernel_done", "init", "root_mounted", "login"):
        assert wanted in ids
    times = {m.id: m.host_s for m in boot.milestones}
    assert times["bootloader"] is not None and times["login"] is not None
    assert 0 <= times["bootloader"] < times["starting_kernel"] < times["login"] < 120
    # The default environment counts down bootdelay=2 before loading the kernel.
    assert times["kernel_loaded"] - times["autoboot"] > 1.5
    calibrate = next(m for m in boot.milestones if m.id == "calibrate")
    assert calibrate.values["lpj"] == 250000 and calibrate.kernel_s is not None
