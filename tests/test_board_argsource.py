"""Every way a board takes its kernel arguments, on copies of the real QEMU board changed the
way real boards differ (tests/support/board_variants.py): a kernel parameter is either applied
(the boot shows it) or refused before the first boot, saying where the arguments come from."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.board_variants import BoardCopy
from support.paths import BOOTLAB
from support.qemu_env import QEMU_ARGS

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.exitcodes import BAD_INPUT

pytestmark = pytest.mark.board


def bootlab(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=timeout)


def boot_sessions(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.glob("*.jsonl")) if load_session(p).meta.get("role") == "boot"]


def test_extlinux_append_is_refused_before_the_first_boot(board_copy: BoardCopy,
                                                          tmp_path: Path) -> None:
    board_copy.use_extlinux(QEMU_ARGS)
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        result = bootlab("ab", url, "--variant", "base:", "--variant", "quiet:quiet", "--boots",
                         "1", "--sessions", str(sessions))
    assert result.returncode == BAD_INPUT, result.stderr
    assert ("quiet cannot be applied: this board's kernel arguments come from the `append` "
            "line of /extlinux/extlinux.conf on virtio 0:1, which the U-Boot environment "
            "cannot change; use --from-linux to edit it") in result.stderr
    assert "nothing was booted" in result.stderr
    assert boot_sessions(sessions) == []


def test_a_script_that_always_sets_bootargs_is_refused_by_boot(board_copy: BoardCopy,
                                                               tmp_path: Path) -> None:
    factory = (board_copy.folder / "boot.cmd").read_text()
    script, count = re.subn(r'if test -z "\$\{bootargs\}"; then (setenv bootargs "[^"]*"); fi',
                            r"\1", factory)
    assert count == 1
    board_copy.put_script(script)
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        result = bootlab("boot", url, "--set", "quiet,bootdelay=0", "--sessions", str(sessions))
    assert result.returncode == BAD_INPUT, result.stderr
    assert ("quiet cannot be applied: this board's kernel arguments come from the `setenv "
            "bootargs` in /boot.scr on virtio 0:1, which overwrites the environment's") \
        in result.stderr
    assert boot_sessions(sessions) == []


def test_a_bootcmd_that_rebuilds_bootargs_takes_quiet_through_its_variable(
        board_copy: BoardCopy, tmp_path: Path) -> None:
    board_copy.set_env({
        "bootcmd": "run mkargs; run distro_bootcmd",
        "mkargs": "setenv bootargs console=${console} root=/dev/vda2 rootfstype=ext4 ro "
                  "rootwait ${optargs}",
        "console": "ttyAMA0,115200", "bootargs": None})
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        result = bootlab("ab", url, "--variant", "base:", "--variant", "quiet:quiet", "--boots",
                         "1", "--sessions", str(sessions))
    assert result.returncode == 0, result.stderr
    assert "variant quiet: setenv optargs quiet" in result.stderr
    shown = {}
    for path in boot_sessions(sessions):
        session = load_session(path)
        ids = {m.id for m in analyze(session.data, load_profile("linux")).milestones}
        shown[session.meta["ab"]["variant"]] = ids
        assert "login" in ids
    assert "linux" in shown["base"] and "linux" not in shown["quiet"]   # the kernel was quiet
