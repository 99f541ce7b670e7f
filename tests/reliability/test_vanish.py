"""The adapter vanishes mid-boot and comes back 0.5 s, 5 s and 60 s later: the session goes
on with the gap marked, the port is reopened within 1 s of its return, and the time base is
kept. Console servers (TCP) and device paths (a pty behind a udev-style symlink) are ridden
out by `bootlab record`; the app rides out an unplugged device path too."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.faults import AppInPty, Record, only_session
from support.paths import BOOTLAB, example_sessions
from support.pty_pair import Pty

from bootlab.core.capture.session import load_session

BOOT = load_session(example_sessions("default")[0]).data
CUT = BOOT.index(b"Starting kernel")
"""The port vanishes after the bootloader, just before the kernel starts."""
STAMP_S = 0.05
"""A chunk's stamp is within this of when the test sent it."""
SETTLE_S = 0.3
"""Time for bytes sent to be read before the port goes (or the recording is stopped)."""


class TcpConsole:
    """A console server (ser2net, QEMU) that stops and starts again on the same port."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(20)
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.conn: socket.socket | None = None

    def opened(self) -> None:
        """bootlab has connected."""
        self.conn, _ = self.server.accept()

    def write(self, data: bytes) -> None:
        assert self.conn is not None
        self.conn.sendall(data)

    def vanish(self) -> None:
        assert self.conn is not None
        self.conn.close()
        self.server.close()

    def come_back(self) -> int:
        """Listen again; when (ns) the port was there."""
        self.server = socket.create_server(("127.0.0.1", int(self.url.rsplit(":", 1)[1])))
        self.server.settimeout(20)
        return time.monotonic_ns()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.server.close()


class PtyConsole:
    """A USB serial adapter as udev shows it: a symlink to the device, gone when unplugged."""

    def __init__(self, folder: Path) -> None:
        self.pair = Pty()
        self.link = folder / "ttyUSB-bench"
        self.link.symlink_to(self.pair.name)
        self.url = str(self.link)

    def opened(self) -> None:
        """bootlab has opened the device (nothing to do for a device)."""

    def write(self, data: bytes) -> None:
        self.pair.write(data)

    def vanish(self) -> None:
        self.link.unlink()
        self.pair.close()

    def come_back(self) -> int:
        """Plugged in again (a new device behind the same name); when (ns)."""
        self.pair = Pty()
        self.link.symlink_to(self.pair.name)
        return time.monotonic_ns()

    def close(self) -> None:
        self.pair.close()


@dataclass
class Run:
    """What the test did, on CLOCK_MONOTONIC: bootlab's session file must agree."""

    path: Path
    before_ns: int
    """The bootloader part was sent."""
    back_ns: int
    """The port was there again."""
    after_ns: int
    """The kernel part was sent."""


def vanish(what: str, transport: str, away_s: float, folder: Path) -> Run:
    """Record a boot whose port vanishes at CUT for `away_s`; stop the recording cleanly."""
    folder.mkdir()
    console = TcpConsole() if transport == "tcp" else PtyConsole(folder)
    sessions = folder / "sessions"
    try:
        if what == "record":
            recorder = Record(console.url, sessions)
            console.opened()
        else:
            app = AppInPty(console.url, sessions, (240, 30))
            console.opened()
            app.wait_for(b"connected")
        before_ns = time.monotonic_ns()
        console.write(BOOT[:CUT])
        time.sleep(SETTLE_S)
        console.vanish()
        time.sleep(away_s)
        if what == "app":
            app.mark()
        back_ns = console.come_back()
        console.opened()
        if what == "record":
            recorder.wait_for(b"reconnected")
        else:
            app.wait_for(b"back after")
        after_ns = time.monotonic_ns()
        console.write(BOOT[CUT:])
        time.sleep(SETTLE_S)
        if what == "record":
            assert recorder.finish() == 0, recorder.err.decode()
        else:
            app.type(b"\x14q")  # Ctrl-T q: quit
            assert app.proc.wait(timeout=30) == 0, app.drawn_text()
    finally:
        if what == "app":
            app.close()
        console.close()
    return Run(only_session(sessions), before_ns, back_ns, after_ns)


def check(run: Run, away_s: float) -> float:
    """Every byte, one gap, one time base; returns the reconnection latency (s)."""
    session = load_session(run.path)
    assert session.data == BOOT
    assert [e["event"] for e in session.events] == ["gap", "reconnect", "end"], session.events
    start = session.meta["start_monotonic_ns"]
    gap, back = session.events[0], session.events[1]
    assert away_s <= back["gap_s"] < away_s + 1.5, back
    assert back["gap_s"] == pytest.approx((back["t"] - gap["t"]) / 1e9, abs=1e-5)
    latency = (start + back["t"] - run.back_ns) / 1e9
    assert 0 <= latency < 1.0, latency
    offsets, times = session.chunk_offsets()
    assert CUT in offsets, "the gap falls between reads"
    first, resumed = times[0], times[offsets.index(CUT)]
    assert abs(start + first - run.before_ns) / 1e9 < STAMP_S
    assert abs(start + resumed - run.after_ns) / 1e9 < STAMP_S   # the same clock after the gap
    analyzed = subprocess.run([*BOOTLAB, "analyze", str(run.path), "--json"],
                              capture_output=True, text=True, timeout=60)
    assert analyzed.returncode == 0, analyzed.stderr
    found = {m["id"]: m["host_s"] for m in json.loads(analyzed.stdout)["milestones"]}
    assert found["bootloader"] < away_s < found["starting_kernel"] <= found["login"]
    return latency


CASES = [("record", "tcp"), ("record", "pty"), ("app", "pty")]


@pytest.mark.parametrize("away_s", [0.5, 5.0, 60.0])
def test_port_vanishes_mid_boot_and_comes_back(away_s: float, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The three cases run side by side (each one waits out the same absence)."""
    with ThreadPoolExecutor(len(CASES)) as pool:
        futures = [pool.submit(vanish, what, transport, away_s, tmp_path / f"{what}-{transport}")
                   for what, transport in CASES]
        runs = [future.result() for future in futures]
    latencies = [check(run, away_s) for run in runs]
    with capsys.disabled():
        shown = ", ".join(f"{what} {transport} {latency * 1000:.0f} ms"
                          for (what, transport), latency in zip(CASES, latencies, strict=True))
        print(f"\nport away {away_s:g} s: reconnected after its return in {shown}")
