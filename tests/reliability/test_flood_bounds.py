"""A board that floods without end, never sends a newline, or stops mid-line: memory stays
bounded, every byte is kept, and the app keeps answering keys."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from support.faults import AppInPty, Record, only_session, rss_kb
from support.pty_pair import Pty

from bootlab.core.capture.session import load_session
from bootlab.core.capture.textlog import TIME_MODES
from bootlab.ui.widgets.log_view import TIME_TITLES

NO_NEWLINE = b"0123456789abcdef\r\t\x1b[1m ~\x7f" * (50 * 2**20 // 24)
"""50 MiB without a single newline."""
LINES = b"".join(b"[%9d.%06d] flood line\r\n" % (n // 10000, n % 10000 * 100)
                 for n in range(1_000_000))
"""A million lines (31 MB)."""
FLOODS = {"no newline": NO_NEWLINE, "1M lines": LINES}
GROWTH_MB = 150
"""Most the resident memory may grow over the flood."""
KEY_S = 3.0
"""Longest the flooded app may take to answer a key."""


class Flood:
    """Sends a flood as fast as the port takes it, on a thread, over TCP (flow-controlled:
    a consumer slower than the flood is not the kernel's problem)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(20)
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.done = threading.Event()
        self._conn: socket.socket | None = None

    def accept(self) -> None:
        """bootlab connects."""
        self._conn, _ = self.server.accept()

    def start(self) -> None:
        """Send, from now on."""
        threading.Thread(target=self._send, daemon=True).start()

    def _send(self) -> None:
        assert self._conn is not None
        view = memoryview(self.data)
        for at in range(0, len(view), 1 << 16):
            self._conn.sendall(view[at:at + (1 << 16)])
        self.done.set()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self.server.close()


class Progress:
    """Whether everything sent is in the session file: sent, and its size stopped growing."""

    def __init__(self, folder: Path, flood: Flood, pid: int, timeout_s: float = 240) -> None:
        self.folder = folder
        self.flood = flood
        self.pid = pid
        self.deadline = time.monotonic() + timeout_s
        self._size = -1
        self._since = time.monotonic()

    def recorded(self) -> bool:
        """Checks now; true once the file has not grown for a second after the flood."""
        assert time.monotonic() < self.deadline, "the flood was not recorded in time"
        rss_kb(self.pid)  # still running
        paths = list(self.folder.glob("*.jsonl"))
        size = paths[0].stat().st_size if paths else 0
        now = time.monotonic()
        if size != self._size or not self.flood.done.is_set():
            self._size, self._since = size, now
        return now - self._since >= 1.0

    def wait(self) -> None:
        """Until recorded."""
        while not self.recorded():
            time.sleep(0.1)


def check_kept(folder: Path, data: bytes) -> None:
    session = load_session(only_session(folder))
    assert session.data == data, (len(session.data), len(data))


def report(capsys: pytest.CaptureFixture[str], text: str) -> None:
    with capsys.disabled():
        print(f"\n{text}")


@pytest.mark.parametrize("name", FLOODS)
def test_record_memory_stays_bounded(name: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    flood = Flood(FLOODS[name])
    recorder = Record(flood.url, tmp_path)
    try:
        flood.accept()
        time.sleep(0.3)
        base = rss_kb(recorder.proc.pid)
        flood.start()
        started = time.monotonic()
        Progress(tmp_path, flood, recorder.proc.pid).wait()
        took = time.monotonic() - started
        growth = (rss_kb(recorder.proc.pid, "VmHWM") - base) / 1024
        assert recorder.finish() == 0, recorder.err.decode()
    finally:
        flood.close()
    report(capsys, f"bootlab record, {name} ({len(flood.data) / 1e6:.0f} MB over TCP, "
                   f"{took:.1f} s): resident memory +{growth:.0f} MB at its peak")
    assert growth < GROWTH_MB
    check_kept(tmp_path, flood.data)


class TimeColumn:
    """Ctrl-T t in the live console: the time column changes, and the console's title says
    which (a key with no Esc after it: Esc followed by a key under load reads as Alt-key)."""

    def __init__(self, app: AppInPty) -> None:
        self.app = app
        self.next = 0

    def press(self) -> float:
        """Seconds from the key to the new title on the terminal."""
        self.next = (self.next + 1) % len(TIME_MODES)
        title = f"console · {TIME_TITLES[TIME_MODES[self.next]]}".encode()
        self.app.mark()
        pressed = time.monotonic()
        self.app.type(b"\x14t")
        return self.app.wait_for(title, timeout_s=30) - pressed


@pytest.mark.parametrize("name", FLOODS)
def test_app_memory_stays_bounded_and_keys_are_answered(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flood = Flood(FLOODS[name])
    app = AppInPty(flood.url, tmp_path)
    try:
        flood.accept()
        app.wait_for(b"connected")
        keys = TimeColumn(app)
        quiet = keys.press()
        time.sleep(0.5)
        base = rss_kb(app.proc.pid)
        flood.start()
        started = time.monotonic()
        latencies = []
        progress = Progress(tmp_path, flood, app.proc.pid)
        while not progress.recorded():
            latencies.append(keys.press())
            time.sleep(0.5)
        took = time.monotonic() - started
        growth = (rss_kb(app.proc.pid, "VmHWM") - base) / 1024
        app.type(b"\x14q")
        assert app.proc.wait(timeout=30) == 0, app.drawn_text()
    finally:
        app.close()
        flood.close()
    report(capsys, f"app, {name} ({len(flood.data) / 1e6:.0f} MB over TCP, {took:.1f} s): "
                   f"resident memory +{growth:.0f} MB at its peak; time column changed "
                   f"{max(latencies) * 1000:.0f} ms (worst of {len(latencies)}) after Ctrl-T t "
                   f"while flooded, {quiet * 1000:.0f} ms when quiet")
    assert growth < GROWTH_MB
    assert max(latencies) < KEY_S
    check_kept(tmp_path, flood.data)


def test_board_stops_mid_line(pty_pair: Pty, tmp_path: Path) -> None:
    """A prompt without a newline, then silence: shown, and kept when recording stops."""
    proc = subprocess.Popen(Record.command(pty_pair.name, tmp_path)[:-1],  # not quiet
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None and proc.stdout is not None
    assert b"recording" in proc.stderr.readline()
    data = b"U-Boot 2023.01\r\nHit any key to stop autoboot:  3"
    pty_pair.write(data)
    assert select.select([proc.stdout], [], [], 10)[0]
    assert b"U-Boot 2023.01" in os.read(proc.stdout.fileno(), 4096)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert b"autoboot: Autoboot countdown" in err  # matched while the line was arriving
    assert b"Hit any key to stop autoboot:  3" in out
    session = load_session(only_session(tmp_path))
    assert session.data == data and session.events[-1]["event"] == "end"
