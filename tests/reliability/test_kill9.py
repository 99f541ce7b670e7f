"""kill -9 mid-flood, 20 times at random moments: the session loads and lost at most the bytes
of the last flush interval (`bootlab record`, and the app on a real terminal)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.faults import AppInPty, Pacer, Record, flood, only_session
from support.paths import BOOTLAB
from support.pty_pair import Pty

from bootlab.core.capture.session import FLUSH_INTERVAL_S, load_session

KILLS = 20
RATE = 1_000_000
"""Flood rate, bytes/s: ~87 times a 115200-baud console, 2.5 times a 4-Mbaud one."""
BOUND_S = 0.2
"""Most traffic a kill may lose, in seconds of the flood: the flush interval and the time the
flushing thread can lag behind the port."""
FLOOD_S = (0.1, 1.2)
"""A kill comes this long (uniformly random) after the flood started."""
DATA = flood(int(RATE * FLOOD_S[1]) + 65536)
PTY_BUFFER = 128 * 1024
"""More than a pty holds between its writer and its reader (64 KiB of tty buffers, 4 KiB of
line discipline)."""

Write = Callable[[bytes], object]


@contextmanager
def console(transport: str) -> Iterator[tuple[str, Callable[[], Write]]]:
    """A board's console: its port URL, and a call giving the write function once bootlab
    has opened it (a TCP console server accepts the connection then)."""
    if transport == "pty":
        pair = Pty()
        try:
            yield pair.name, lambda: pair.write
        finally:
            pair.close()
        return
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(20)
    conns: list[socket.socket] = []

    def accept() -> Write:
        conn, _ = server.accept()
        conns.append(conn)
        return conn.sendall

    try:
        yield f"socket://127.0.0.1:{server.getsockname()[1]}", accept
    finally:
        for conn in conns:
            conn.close()
        server.close()


def kill_mid_flood(what: str, transport: str, folder: Path, flood_s: float) -> tuple[int, Path]:
    """Start bootlab, flood it for `flood_s`, kill -9 it: (bytes sent, the session file)."""
    with console(transport) as (port, opened):
        if what == "record":
            recorder = Record(port, folder)
            write = opened()
            proc = recorder.proc
        else:
            app = AppInPty(port, folder)
            write = opened()
            app.wait_for(b"connected")
            proc = app.proc
        try:
            pacer = Pacer(write, DATA, RATE)
            pacer.run(flood_s)
            proc.kill()
            proc.wait(timeout=20)
        finally:
            if what == "app":
                app.close()
    return pacer.sent, only_session(folder)


@pytest.mark.parametrize("what", ["record", "app"])
def test_kill_9_mid_flood_loses_at_most_the_flush_interval(
        what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    results: list[tuple[int, int, str, Path]] = []
    for kill in range(KILLS):
        transport = ("pty", "tcp")[kill % 2]
        sent, path = kill_mid_flood(what, transport, tmp_path / f"kill{kill:02d}",
                                    rng.uniform(*FLOOD_S))
        session = load_session(path)
        kept = session.data
        assert kept == DATA[:len(kept)], f"kill {kill}: the session is not the flood's start"
        assert all("cut off" in notice for notice in session.notices), session.notices
        results.append((sent - len(kept), sent, transport, path))
    lost, sent, transport, worst = max(results)
    with capsys.disabled():
        print(f"\nkill -9 of {what} at {RATE / 1e6:g} MB/s, {KILLS} kills (seed {seed}): worst "
              f"loss {lost} bytes = {lost / RATE * 1000:.1f} ms of traffic ({transport}, "
              f"{sent} sent); mean {sum(r[0] for r in results) / KILLS / RATE * 1000:.1f} ms; "
              f"flush interval {FLUSH_INTERVAL_S * 1000:g} ms")
    assert lost <= RATE * BOUND_S, results
    analyzed = subprocess.run([*BOOTLAB, "analyze", str(worst), "--json"],
                              capture_output=True, text=True, timeout=60)
    assert analyzed.returncode == 0, analyzed.stderr
    assert json.loads(analyzed.stdout)["lines"] >= load_session(worst).data.count(b"\n")


def test_sigterm_mid_flood_records_everything_already_read(pty_pair: Pty, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    """A clean stop under a flood faster than recording: what the reader thread had read
    (up to 4 MiB queued) is recorded; only what is still in the kernel's pty buffer is not."""
    data = flood(64 * 2**20)
    recorder = Record(pty_pair.name, tmp_path)
    os.set_blocking(pty_pair.master, False)
    sent = 0
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and sent < len(data):
        select.select([], [pty_pair.master], [], 0.1)
        with contextlib.suppress(BlockingIOError):
            sent += os.write(pty_pair.master, data[sent:sent + 65536])
    assert recorder.finish() == 0, recorder.err.decode()
    kept = load_session(only_session(tmp_path)).data
    assert kept == data[:len(kept)]
    with capsys.disabled():
        print(f"\nSIGTERM mid-flood: {sent} bytes sent, {sent - len(kept)} not recorded "
              "(still in the pty)")
    assert sent - len(kept) <= PTY_BUFFER
