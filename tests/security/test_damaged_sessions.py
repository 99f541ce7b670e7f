"""Truncated, corrupted and future-version session files: a clear message naming the file and
the damage, and everything readable still shown (analyze, replay, sessions, export, the app)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import BOOTLAB, example_sessions

from bootlab.ui.launch import replay_app
from bootlab.ui.main.screen import MainScreen

EXAMPLE = example_sessions("default")[0]


def truncated(data: bytes) -> bytes:
    """Cut in the middle of a record at 80 % of the file (kill -9, a full disk)."""
    at = data.index(b'"rx"', len(data) * 8 // 10)
    return data[:at + 10]


def corrupted(data: bytes) -> bytes:
    """Two records in the middle turned to garbage (a bad sector, a bad copy)."""
    lines = data.split(b"\n")
    middle = len(lines) // 2
    lines[middle] = b"\x00\xff garbage"
    lines[middle + 1] = lines[middle + 1][:-3]
    return b"\n".join(lines)


def future(data: bytes) -> bytes:
    """Written by a newer bootlab: version 2, new fields and a record kind unknown here."""
    header, rest = data.split(b"\n", 1)
    meta = json.loads(header)
    meta.update(version=2, compression=None, new_field={"x": [1, 2]})
    extra = b'{"t": 5, "frame": "AAEC", "channel": 2}\n'
    return json.dumps(meta).encode() + b"\n" + extra + rest.replace(b'"rx"', b'"x2":1,"rx"', 5)


DAMAGE: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "truncated": (truncated, "the last record was cut off"),
    "corrupted": (corrupted, "2 unreadable record(s) skipped"),
    "future": (future, "written by a newer bootlab (format 2"),
}


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str, str]:
    damage, notice = DAMAGE[request.param]
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / EXAMPLE.name
    path.write_bytes(damage(EXAMPLE.read_bytes()))
    return path, notice, request.param


def bootlab(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=60)


def test_analyze_shows_what_is_readable(damaged: tuple[Path, str, str]) -> None:
    path, notice, kind = damaged
    done = bootlab("analyze", str(path), "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert f"bootlab: {path}: {notice}" in done.stderr
    ids = [m["id"] for m in json.loads(done.stdout)["milestones"]]
    assert {"bootloader", "autoboot", "starting_kernel"} <= set(ids)
    if kind != "truncated":
        assert "login" in ids


def test_replay_prints_what_is_readable(damaged: tuple[Path, str, str]) -> None:
    path, notice, kind = damaged
    done = bootlab("replay", str(path), "--speed", "0")
    assert done.returncode == 0 and f"bootlab: {path}: {notice}" in done.stderr
    assert "U-Boot" in done.stdout and "Starting kernel" in done.stdout
    assert ("login:" in done.stdout) == (kind != "truncated")


def test_sessions_lists_it_and_says_what_is_wrong(damaged: tuple[Path, str, str]) -> None:
    path, notice, _ = damaged
    done = bootlab("sessions", "--sessions", str(path.parent))
    assert done.returncode == 0
    (row,) = [line for line in done.stdout.splitlines() if path.name in line]
    assert "unreadable" not in row and row.split()[1] == "default"
    assert f"bootlab: {path}: {notice}" in done.stderr


def test_export_keeps_what_is_readable(damaged: tuple[Path, str, str]) -> None:
    path, notice, _ = damaged
    done = bootlab("export", str(path), "--format", "jsonl")
    assert done.returncode == 0 and notice in done.stderr
    assert any("Starting kernel" in json.loads(line)["text"] for line in done.stdout.splitlines())


async def test_the_app_replays_it_with_a_notice(damaged: tuple[Path, str, str]) -> None:
    path, notice, _ = damaged
    app = replay_app(path, speed=0)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen_stack[0]
        assert isinstance(screen, MainScreen)
        deadline = time.monotonic() + 45
        # The console draws its lines in batches: the last ones may follow the end's notice.
        while not screen.status.state.startswith("ended") or screen.console.line_count <= 50:
            assert time.monotonic() < deadline, screen.console.line_count
            await pilot.pause(0.05)
        assert any(notice in n.message and path.name in n.message for n in app._notifications)


@pytest.mark.parametrize(("content", "reason"), [
    (b'{"format":"bootlab-session","vers', "header) is cut off"),
    (b'{"format":"bootlab-session","version":1,"label":\n{"t":1,"rx":"x"}\n',
     "header) is cut off or damaged"),
])
def test_nothing_readable_is_one_clear_error(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    for argv in (["analyze", str(path)], ["replay", str(path)]):
        done = bootlab(*argv)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines() == [done.stderr.strip()]
        assert reason in done.stderr and str(path) in done.stderr
