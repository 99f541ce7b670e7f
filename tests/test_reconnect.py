"""A lost port does not end the recording: the gap is recorded and the port is reopened."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest
from support.faults import Record, only_session
from support.paths import BOOTLAB
from support.pty_pair import Pty

from bootlab.core.capture.session import load_session
from bootlab.transports.reader import Chunk, Gap, Reconnected, StampingReader

BEFORE = b"U-Boot 2023.01 before the gap\r\n"
AFTER = b"Starting kernel ... after the gap\r\n"


@pytest.fixture(autouse=True)
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lock files go to a folder of the test's own (inherited by `bootlab record`)."""
    (tmp_path / "lock").mkdir()
    monkeypatch.setenv("BOOTLAB_LOCK_DIR", str(tmp_path / "lock"))


def check_session(path: Path, sent_before: float, sent_after: float) -> None:
    """Every byte, one gap then one reconnection between them, one time base throughout."""
    session = load_session(path)
    assert session.data == BEFORE + AFTER
    offsets, times = session.chunk_offsets()
    assert len(BEFORE) in offsets, session.chunks        # the gap falls between reads
    t_before, t_after = times[0], times[offsets.index(len(BEFORE))]
    kinds = [e["event"] for e in session.events]
    assert kinds == ["gap", "reconnect", "end"], session.events
    gap, back = session.events[0]["t"], session.events[1]["t"]
    assert t_before < gap < back < t_after
    measured = (t_after - t_before) / 1e9
    assert abs(measured - (sent_after - sent_before)) < 0.05, (measured, sent_after - sent_before)
    assert session.events[1]["gap_s"] == pytest.approx((back - gap) / 1e9, abs=1e-5)


def test_tcp_console_server_goes_away_and_comes_back(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    recording = Record(f"socket://127.0.0.1:{port}", tmp_path)
    conn, _ = server.accept()
    sent_before = time.monotonic()
    conn.sendall(BEFORE)
    time.sleep(0.2)
    conn.close()                                        # the console server goes away
    server.close()
    recording.wait_for(b"port lost")
    time.sleep(0.5)
    server = socket.create_server(("127.0.0.1", port))  # ... and comes back on the same port
    server.settimeout(5)
    back = time.monotonic()
    conn, _ = server.accept()
    assert time.monotonic() - back < 1.0
    reconnected = recording.wait_for(b"reconnected")
    assert reconnected - back < 1.0
    sent_after = time.monotonic()
    conn.sendall(AFTER)
    time.sleep(0.3)
    assert recording.finish() == 0, recording.err.decode()
    path = only_session(tmp_path)
    conn.close()
    server.close()
    check_session(path, sent_before, sent_after)


def test_unplugged_adapter_comes_back(tmp_path: Path) -> None:
    """A device path (here a symlink, as udev makes) vanishes and reappears on a new pty."""
    link = tmp_path / "ttyFAKE"
    first = Pty()
    link.symlink_to(first.name)
    recording = Record(str(link), tmp_path / "sessions")
    sent_before = time.monotonic()
    first.write(BEFORE)
    time.sleep(0.2)
    link.unlink()                                       # unplugged: the node goes ...
    first.close()                                       # ... and so does the device
    recording.wait_for(b"port lost")
    time.sleep(0.5)
    second = Pty()
    link.symlink_to(second.name)                        # plugged in again
    back = time.monotonic()
    reconnected = recording.wait_for(b"reconnected")
    assert reconnected - back < 1.0
    sent_after = time.monotonic()
    second.write(AFTER)
    time.sleep(0.3)
    assert recording.finish() == 0, recording.err.decode()
    path = only_session(tmp_path / "sessions")
    second.close()
    check_session(path, sent_before, sent_after)


def test_reader_reports_gap_and_reconnection_in_order(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    with StampingReader(f"socket://127.0.0.1:{port}", 115200, reconnect=True) as reader:
        conn, _ = server.accept()
        conn.sendall(BEFORE)
        time.sleep(0.1)
        conn.close()
        server.close()
        time.sleep(0.3)
        server = socket.create_server(("127.0.0.1", port))
        server.settimeout(5)
        conn, _ = server.accept()
        conn.sendall(AFTER)
        events = []
        deadline = time.monotonic() + 5
        for event in reader.events(lambda: time.monotonic() > deadline):
            if not isinstance(event, Chunk | Gap | Reconnected):
                continue
            events.append(event)
            if isinstance(event, Chunk) and AFTER in event.data:
                break
        reader.write(b"typed after the reconnection")
        assert conn.recv(100) == b"typed after the reconnection"
        conn.close()
        server.close()
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Chunk", "Gap", "Reconnected", "Chunk"], events
    chunk1, gap, back, chunk2 = events
    assert isinstance(gap, Gap) and isinstance(back, Reconnected)
    assert isinstance(chunk1, Chunk) and isinstance(chunk2, Chunk)
    assert chunk1.t_ns < gap.t_ns == back.lost_ns < back.t_ns < chunk2.t_ns
    assert 0.3 < (back.t_ns - gap.t_ns) / 1e9 < 1.5


def test_exec_does_not_reconnect_by_default(tmp_path: Path) -> None:
    """Rerunning a command that ended is not riding out an unplug: exit 3, as before."""
    result = subprocess.run([*BOOTLAB, "record", "exec:sh -c 'echo U-Boot; sleep 0.2'",
                             "--sessions", str(tmp_path)],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 3, result.stderr
    assert "command ended" in result.stderr and "port lost" not in result.stderr
    assert "U-Boot" in result.stdout
