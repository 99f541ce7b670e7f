"""The `--from-linux` file route on a copy of the real QEMU board that boots from
extlinux.conf and whose Linux can mount its FAT boot partition (`BoardCopy.add_fat_modules`):
the `append` line is edited for the variant that needs it, the diff is shown, the file is the
original again at the end; an edit a crashed run left is restored by the next command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.board_variants import BoardCopy
from support.paths import BOOTLAB
from support.qemu_env import QEMU_ARGS

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.fileedit import EditState, state_path
from bootlab.core.capture.session import load_session

pytestmark = pytest.mark.board
CONF = "extlinux/extlinux.conf"


def bootlab(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=timeout)


def test_ab_from_linux_edits_the_append_line_per_variant_and_restores_it(
        board_copy: BoardCopy, tmp_path: Path) -> None:
    board_copy.use_extlinux(QEMU_ARGS)
    board_copy.add_fat_modules(tmp_path / "work")
    original = board_copy.get(CONF)
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        # Seed 0 boots base first: the quiet boot leaves the file edited for the run's end.
        result = bootlab("ab", url, "--from-linux", "--persist", "--variant", "base:",
                         "--variant", "quiet:quiet", "--boots", "1", "--seed", "0",
                         "--sessions", str(sessions))
    assert result.returncode == 0, result.stderr
    assert f"+    append {QEMU_ARGS} quiet" in result.stderr   # the diff, before the write
    assert "restoring it" in result.stderr
    shown = {}
    for path in sorted(sessions.glob("*.jsonl")):
        session = load_session(path)
        if session.meta.get("ab"):                    # a measured boot (not the setup boot)
            ids = {m.id for m in analyze(session.data, load_profile("linux")).milestones}
            shown[session.meta["ab"]["variant"]] = ids
    assert "login" in shown["base"] and "login" in shown["quiet"]
    assert "linux" in shown["base"] and "linux" not in shown["quiet"]   # the kernel was quiet
    assert board_copy.get(CONF) == original
    with pytest.raises(subprocess.CalledProcessError):
        board_copy.get(CONF + ".bootlab-orig")
    assert list(sessions.glob("edit-*.json")) == []


def test_an_edit_a_crashed_run_left_is_restored_by_the_next_command(
        board_copy: BoardCopy, tmp_path: Path) -> None:
    board_copy.use_extlinux(QEMU_ARGS)
    board_copy.add_fat_modules(tmp_path / "work")
    original = board_copy.get(CONF)
    board_copy.put(CONF, original.replace(b"rootwait", b"rootwait quiet"))
    board_copy.put(CONF + ".bootlab-orig", original)
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        planted = state_path(sessions, url)
        EditState.of(url, "virtio 0:1", "/dev/vda1", "/" + CONF, original).save(planted)
        result = bootlab("boot", url, "--restore", "--sessions", str(sessions))
    assert result.returncode == 0, result.stderr
    assert "-    append console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait quiet" \
        in result.stderr
    assert "the edited file is restored" in result.stderr
    assert board_copy.get(CONF) == original
    with pytest.raises(subprocess.CalledProcessError):
        board_copy.get(CONF + ".bootlab-orig")
    assert not planted.exists()
