"""A full disk and a read-only sessions folder: a clear error, nothing recorded is damaged, and
the app's console goes on (shows the board, takes keys) without recording."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.faults import Record, flood
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from textual.message import Message
from textual.notifications import Notify

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import SessionWriteError, SessionWriter, load_session
from bootlab.ui.launch import live_app
from bootlab.ui.widgets.status_line import render_status

DISK = 64 * 1024
DATA = flood(4 * DISK)
KEPT = re.compile(r"holds everything received up to [\d.]+ s \((\d+) bytes\)")


def _mount(target: Path, *options: str) -> None:
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs",
                             str(target)], capture_output=True, text=True)
    if result.returncode:
        why = f"mounting a tmpfs is not permitted here: {result.stderr.strip()}"
        if os.environ.get("BOOTLAB_REQUIRE_ROOT"):
            pytest.fail(why + " (BOOTLAB_REQUIRE_ROOT is set)")
        pytest.skip(why + " (needs root)")


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs: the sessions folder of a disk that fills up."""
    target = tmp_path / "disk"
    target.mkdir()
    _mount(target, f"size={DISK}", "mode=0700")
    yield target
    subprocess.run(["umount", "-l", str(target)], check=True)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A sessions folder on a read-only filesystem (root writes through mode bits)."""
    target = tmp_path / "ro"
    target.mkdir()
    _mount(target, "size=64k", "ro")
    yield target
    subprocess.run(["umount", "-l", str(target)], check=True)


def fill(path: Path) -> None:
    """Write until the disk is full."""
    with path.open("wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"x" * 4096)


def check_kept(folder: Path, kept: int) -> None:
    """The one session loads cleanly and holds exactly the flood's first `kept` bytes."""
    (path,) = folder.glob("*.jsonl")
    session = load_session(path)
    assert session.notices == []
    assert len(session.data) == kept and session.data == DATA[:kept]
    assert path.stat().st_size > DISK * 3 // 4  # it wrote until the disk was full


def test_writer_keeps_every_whole_record_and_then_drops(full_disk: Path) -> None:
    """In-process: records that fit stay intact, the rest is dropped, never buffered."""
    failed: list[SessionWriter] = []
    writer = SessionWriter(full_disk / "s.jsonl", {"label": "x"}, 0, failed.append)
    for at in range(0, len(DATA), 1000):
        writer.rx(DATA[at:at + 1000], at)
        writer.flush()
    assert failed == [writer] and writer.error is not None
    assert writer.error.errno == errno.ENOSPC and writer._buffer == []
    writer.tx(b"typed", 1)
    writer.close()
    session = load_session(full_disk / "s.jsonl")
    assert session.notices == [] and session.sent == [] and session.events == []
    assert session.data == DATA[:writer.saved_rx_bytes]
    assert session.chunks[-1][0] == writer.saved_t_ns
    assert (full_disk / "s.jsonl").stat().st_size > DISK * 3 // 4


def test_writer_on_a_disk_with_no_room_leaves_no_file(full_disk: Path) -> None:
    fill(full_disk / "filler")
    with pytest.raises(SessionWriteError, match=r"cannot create a session file in .*No space"):
        SessionWriter(full_disk / "s.jsonl", {"label": "x" * 8192}, 0)
    assert not (full_disk / "s.jsonl").exists()


def test_record_on_a_full_disk_stops_with_a_clear_error(pty_pair: Pty, full_disk: Path) -> None:
    recorder = Record(pty_pair.name, full_disk)
    os.set_blocking(pty_pair.master, False)  # it stops reading when it stops recording
    sent = 0
    deadline = time.monotonic() + 20
    while recorder.proc.poll() is None:
        assert time.monotonic() < deadline and sent < len(DATA), recorder.err.decode()
        with contextlib.suppress(BlockingIOError):
            sent += os.write(pty_pair.master, DATA[sent:sent + 2048])
        time.sleep(0.01)
    code = recorder.finish()
    err = recorder.err.decode()
    assert code == 2, err
    assert "No space left on device" in err and "Traceback" not in err
    found = KEPT.search(err)
    assert found, err
    check_kept(full_disk, int(found[1]))


def test_record_into_a_read_only_folder_is_refused(pty_pair: Pty, read_only: Path) -> None:
    result = subprocess.run([*Record.command(pty_pair.name, read_only)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert "cannot create a session file" in result.stderr
    assert "Read-only file system" in result.stderr and "Traceback" not in result.stderr
    assert list(read_only.iterdir()) == []


@pytest.mark.parametrize("case", ["full disk", "read-only folder"])
async def test_app_says_so_and_the_console_goes_on(case: str, pty_pair: Pty, tmp_path: Path,
                                                  request: pytest.FixtureRequest) -> None:
    folder: Path = request.getfixturevalue("full_disk" if case == "full disk" else "read_only")
    seen: list[Message] = []
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), folder)

    def problems() -> list[str]:
        return [m.notification.message for m in seen
                if isinstance(m, Notify) and m.notification.title == "session"]

    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "connected", "the port to open")
        sent = 0
        while not problems():
            assert sent < len(DATA), "no notification about the session"
            pty_pair.write(DATA[sent:sent + 4096])
            sent += 4096
            await pilot.pause(0.01)
        console = screen.console
        pty_pair.write(b"U-Boot 2023.01 after the failure\r\n")
        await wait_until(pilot, lambda: any(b"after the failure" in line.raw
                                            for line in console.lines[-5:]),
                         "the board's output after the failure")
        await pilot.press("a", "enter")
        assert pty_pair.read(2) == b"a\r"
        assert app.is_running
        assert "NOT RECORDING" in str(render_status(screen.status))
        assert "rec " not in str(render_status(screen.status))
    assert link.wait_closed()
    (text,) = problems()
    if case == "full disk":
        assert "No space left on device" in text and "nothing more is recorded" in text
        found = KEPT.search(text)
        assert found, text
        check_kept(folder, int(found[1]))
    else:
        assert "cannot create a session file" in text and "Read-only file system" in text
        assert list(folder.iterdir()) == []
