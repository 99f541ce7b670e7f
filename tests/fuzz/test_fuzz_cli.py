"""The commands on fuzzed input: every run ends in output or a one-line error, never a traceback.

In-process runs of `bootlab.cli.main` give hypothesis many inputs per second; a few fixed kinds
of garbage are also run as real subprocesses, where a traceback would show on stderr.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from support.fuzzcount import count
from support.paths import BOOTLAB
from support.strategies import fuzz, log_bytes, session_file

from bootlab.cli import main

pytestmark = pytest.mark.usefixtures("fuzz_counts")
SCRATCH = Path(tempfile.mkdtemp(prefix="bootlab-cli-fuzz-"))
SHOWN_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def run(*argv: str) -> tuple[int, str, str]:
    """`bootlab ARGV` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def check(code: int, out: str, err: str) -> None:
    """A finished command: a known exit code, diagnostics as `bootlab: ...` lines, nothing that
    could drive a terminal."""
    assert code in (0, 1, 2), (code, err)
    for line in err.splitlines():
        assert line.startswith("bootlab: ") or line == "", err
    assert SHOWN_CONTROL.search(out) is None, out
    assert SHOWN_CONTROL.search(err) is None, err


@fuzz(60)
@given(data=session_file())
def test_every_command_on_any_session_file(data: bytes) -> None:
    count("cli on session files (7 commands each)")
    folder = SCRATCH / "sessions"
    folder.mkdir(exist_ok=True)
    path = folder / "20260101-000000-fuzz-01.jsonl"
    path.write_bytes(data)
    name = str(path)
    for argv in (["analyze", name], ["analyze", name, "--json"],
                 ["replay", name, "--speed", "0", "--timestamps"],
                 ["export", name, "--format", "asciicast"], ["export", name, "--format", "jsonl"],
                 ["export", name, "--format", "markdown"], ["export", name, "--format", "csv"],
                 ["compare", name, name], ["sessions", "--sessions", str(folder)]):
        check(*run(*argv))


@fuzz(60)
@given(data=log_bytes)
def test_analyze_replay_and_export_of_any_log(data: bytes) -> None:
    count("cli on log files (4 commands each)")
    path = SCRATCH / "boot.log"
    path.write_bytes(data)
    for argv in (["analyze", str(path), "--json"], ["replay", str(path), "--speed", "0"],
                 ["export", str(path), "--format", "asciicast"],
                 ["export", str(path), "--format", "markdown"]):
        check(*run(*argv))


def garbage_files(root: Path) -> dict[str, Path]:
    """Files that are no boot log at all, or a session damaged past use."""
    files = {
        "random": (root / "random.bin", os.urandom(65536)),
        "zeros": (root / "zeros.bin", bytes(4096)),
        "gzip": (root / "log.gz", b"\x1f\x8b\x08\x00" + os.urandom(2000)),
        "header only, cut": (root / "cut.jsonl", b'{"format":"bootlab-sess'),
        "empty": (root / "empty.log", b""),
    }
    out = {}
    for name, (path, data) in files.items():
        path.write_bytes(data)
        out[name] = path
    out["directory"] = root
    out["missing"] = root / "no-such-file.log"
    fifo = root / "fifo"
    os.mkfifo(fifo)
    out["fifo"] = fifo
    return out


@pytest.mark.parametrize("command", ["analyze", "replay", "export"])
def test_garbage_is_one_line_and_exit_2_in_a_real_process(tmp_path: Path, command: str) -> None:
    for what, path in garbage_files(tmp_path).items():
        argv = [*BOOTLAB, command, str(path)] + (["--format", "jsonl"] if command == "export"
                                                 else [])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, (what, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"bootlab: {path}: "), (what, lines)
        assert done.stdout == ""
        count(f"cli {command}, real process", 1)
