"""Evidence per A/B boot on the real QEMU board: each variant's setting shown in force from the
boot's own log, the base shown without it; a setting lost behind bootlab's back (a second boot
script the first one sources resets bootargs) stops the run with the line that shows it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from support.board_variants import BoardCopy
from support.paths import BOOTLAB

from bootlab.core.capture.session import load_session
from bootlab.exitcodes import NOT_IN_FORCE

pytestmark = pytest.mark.board
FACTORY_ARGS = "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait"


def bootlab(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=timeout)


def test_quiet_in_force_and_the_base_without_it(board_url: str, tmp_path: Path) -> None:
    result = bootlab("ab", board_url, "--variant", "base:", "--variant", "quiet:quiet",
                     "--boots", "1", "--seed", "0", "--sessions", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "quiet: quiet in force (no kernel info line (Booting Linux, Linux version, Run " \
        "/init) between Starting kernel and user space), 1 of 1 boots: 'Starting kernel ...'" \
        in result.stdout
    assert "base: quiet not in force (no quiet on the command line the kernel printed), 1 of 1 " \
        f"boots: '[    0.000000] Kernel command line: {FACTORY_ARGS}'" in result.stdout
    state = json.loads((tmp_path / "ab-ab.json").read_text())
    assert len(state["done"]) == 2 and state["contradicted"] == []
    for entry in state["done"]:
        (check,) = load_session(tmp_path / entry["session"]).meta["verified"]
        assert check["label"] == "quiet" and check["wanted"] == (entry["variant"] == "quiet")


def test_bootargs_reset_behind_bootlabs_back_stops_the_run(board_copy: BoardCopy,
                                                           tmp_path: Path) -> None:
    # boot.scr sources a second script just before bootm; that one sets the factory bootargs.
    factory = (board_copy.folder / "boot.cmd").read_text()
    script, count = re.subn(r"(?m)^bootm ",
                            "load ${devtype} ${devnum}:${distro_bootpart} 0x46000000 /late.scr; "
                            "source 0x46000000\nbootm ", factory)
    assert count == 1
    board_copy.put_script(script)
    board_copy.put_script(f'setenv bootargs "{FACTORY_ARGS}"\n', "late.scr")
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        result = bootlab("ab", url, "--variant", "base:", "--variant", "quiet:quiet", "--boots",
                         "2", "--seed", "1", "--sessions", str(sessions))
    assert result.returncode == NOT_IN_FORCE, result.stderr
    assert result.stdout == ""
    message = result.stderr.strip().splitlines()[-1]
    assert re.match(r"bootlab: not in force: quiet run 1: expected quiet in force, the boot "
                    r"shows it not in force: no quiet on the command line the kernel printed "
                    rf"\(line \d+: '\[    0\.000000\] Kernel command line: {FACTORY_ARGS}'\)",
                    message), message
    assert "kernel arguments come from" in message and "/boot.scr" in message
    assert "left out of the statistics" in message
    state = json.loads((sessions / "ab-ab.json").read_text())
    assert state["done"] == [] and [c["variant"] for c in state["contradicted"]] == ["quiet"]
    session = load_session(sessions / state["contradicted"][0]["session"])
    assert "quiet" in session.meta["settings"]["cmdline"]          # bootlab did set it
    assert session.meta["verified"][0]["shown"] == "not in force"
