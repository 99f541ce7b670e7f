"""One atomic write for every file bootlab replaces: the old file or the new one, whole."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bootlab.core.files.atomic import write_atomic


def test_new_file_is_private_and_holds_the_text(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_atomic(path, "{}\n")
    assert path.read_text() == "{}\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_mode_given_is_kept_and_the_file_replaced(tmp_path: Path) -> None:
    path = tmp_path / "linux.toml"
    path.write_text("old\n")
    write_atomic(path, "new\n", 0o644)
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_the_file_and_then_its_folder_are_synced(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file")
        real_fsync(fd)

    monkeypatch.setattr("bootlab.core.files.atomic.os.fsync", fsync)
    write_atomic(tmp_path / "a.json", "x")
    assert synced == ["file", "folder"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    path = tmp_path / "ab-run.json"
    path.write_text("before\n")

    def replace(_src: str, _dst: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("bootlab.core.files.atomic.os.replace", replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, "after\n")
    assert path.read_text() == "before\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ab-run.json"]
