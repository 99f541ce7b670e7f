"""The session runtime runs without a front end: a whole live session (the fake board on a pty
booted, a key typed, a reboot job run) and its replay, driven from a fresh interpreter that
never loads Textual or Rich (`support/headless_session.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_a_live_session_and_its_replay_run_headless(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(TESTS / "support" / "headless_session.py"),
                          str(tmp_path)], capture_output=True, text=True, timeout=240,
                         env={**os.environ, "PYTHONPATH": str(TESTS)}, check=False)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["loaded"] == []                              # no Textual, no Rich
    assert seen["closed"]
    assert seen["job"][0] == "done" and "reboot -f at the shell" in seen["job"][1]
    assert seen["sessions"][1:] == ["setup", "boot"]         # the job's sessions, in order
    assert seen["sent"] == ["\r"]                            # the typed key, recorded
    live = seen["live_milestones"]
    assert live[0] == "bootloader" and live[-1] == "login"
    assert seen["replay_milestones"] == live                 # the replay shows what live did
