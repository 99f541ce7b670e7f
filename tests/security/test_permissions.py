"""Recorded boots are the owner's alone: session files 0600 and a new sessions folder 0700,
whatever the umask; the A/B state file too."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import BOOTLAB
from support.pty_pair import Pty

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.abplan import load_or_create
from bootlab.core.recording.recorder import Recorder, StopRule


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask, as a careless login shell or service might set it."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_record_with_a_permissive_umask(pty_pair: Pty, tmp_path: Path) -> None:
    folder = tmp_path / "new" / "sessions"
    process = subprocess.Popen([*BOOTLAB, "record", pty_pair.name, "--sessions", str(folder),
                                "--boots", "2", "--until", "login", "--timeout", "30", "-q"],
                               stderr=subprocess.PIPE, preexec_fn=lambda: os.umask(0))
    deadline = time.monotonic() + 45
    while not folder.is_dir() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    for _ in range(2):
        pty_pair.write(b"U-Boot 2023.01 (Jan 01 2023)\r\nStarting kernel ...\r\nboard login: \r\n")
        time.sleep(0.3)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    files = sorted(folder.glob("*.jsonl"))
    assert len(files) == 2
    assert [mode(f) for f in files] == [0o600, 0o600]
    assert mode(folder) == 0o700


@pytest.mark.usefixtures("open_umask")
def test_the_app_and_board_commands_recorder_too(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    recorder = Recorder(load_profile("linux"), folder, {"label": "x"}, StopRule())
    recorder.feed(b"secret console output\r\n", recorder.start_ns + 1)
    recorder.start_session(recorder.start_ns + 2, role="boot")
    recorder.finish()
    assert [mode(r.path) for r in recorder.records] == [0o600, 0o600]
    assert mode(folder) == 0o700


@pytest.mark.usefixtures("open_umask")
def test_ab_state_file(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    state = load_or_create(folder, "run", [("base", ""), ("quiet", "quiet")], 2, 1)
    state.save()
    assert mode(state.path) == 0o600 and mode(folder) == 0o700


@pytest.mark.usefixtures("open_umask")
def test_an_existing_folder_is_left_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    recorder = Recorder(load_profile("linux"), folder, {}, StopRule())
    recorder.finish()
    assert mode(folder) == 0o755 and mode(recorder.records[0].path) == 0o600
