"""Tools shared by the reliability tests: a checkable flood, paced sending, bootlab run as a
real subprocess (headless, or the app on a pseudo-terminal of its own), memory figures."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

from support.paths import BOOTLAB

FLOOD_LINE = b"[%9d.000000] flood: console output at full speed, line %9d\r\n"


def flood(size: int) -> bytes:
    """`size` bytes of numbered console lines: any prefix of it can be checked exactly."""
    count = size // len(FLOOD_LINE % (0, 0)) + 1
    return b"".join(FLOOD_LINE % (n // 1000, n) for n in range(count))[:size]


class Pacer:
    """Sends a stream at a steady rate in small writes; `sent` counts what was accepted."""

    def __init__(self, write: Callable[[bytes], object], data: bytes, rate: float,
                 step_s: float = 0.002) -> None:
        self.write = write
        self.data = data
        self.rate = rate
        self.step_s = step_s
        self.sent = 0
        self._start: float | None = None

    def run(self, seconds: float) -> None:
        """Send for `seconds` more (less if the data runs out), keeping to the rate on average
        since the first call."""
        end = time.monotonic() + seconds
        if self._start is None:
            self._start = time.monotonic()
        while self.sent < len(self.data):
            now = time.monotonic()
            if now >= end:
                return
            due = min(len(self.data), int((now - self._start) * self.rate))
            if due > self.sent:
                self.write(self.data[self.sent:due])
                self.sent = due
            time.sleep(self.step_s)


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (or its peak, `VmHWM`) in KiB."""
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith(field + ":"):
            return int(row.split()[1])
    raise LookupError(f"no {field} for process {pid}")


def only_session(folder: Path) -> Path:
    """The one session file in a folder."""
    paths = sorted(folder.glob("*.jsonl"))
    assert len(paths) == 1, paths
    return paths[0]


class Record:
    """`bootlab record PORT` in the background, its stderr collected as it comes."""

    def __init__(self, port: str, folder: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(self.command(port, folder, *extra),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.err = b""
        self.wait_for(b"recording")

    @staticmethod
    def command(port: str, folder: Path, *extra: str) -> list[str]:
        """The command line: quiet, sessions into `folder`."""
        return [*BOOTLAB, "record", port, "--sessions", str(folder), "-q", *extra]

    def wait_for(self, text: bytes, timeout_s: float = 20) -> float:
        """Wait until `text` is on stderr; when it was seen (time.monotonic)."""
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        deadline = time.monotonic() + timeout_s
        while text not in self.err:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} on stderr: {self.err.decode()}"
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 65536)
                assert chunk, f"exited before {text!r}: {self.err.decode()}"
                self.err += chunk
        return time.monotonic()

    def finish(self, sig: int = signal.SIGTERM, timeout_s: float = 30) -> int:
        """Signal it, wait for it to end; its exit code."""
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)
        _, rest = self.proc.communicate(timeout=timeout_s)
        self.err += rest
        return self.proc.returncode


class AppInPty:
    """`bootlab PORT` (the app) on a pseudo-terminal of its own, as a person would run it.

    A thread reads everything the app draws (so it never blocks on a full terminal) and keeps
    the last `KEEP` bytes; `wait_for` looks for text in what was drawn since `mark()`.
    """

    KEEP = 1 << 20

    def __init__(self, port: str, folder: Path, size: tuple[int, int] = (100, 30),
                 *extra: str) -> None:
        self.master, slave = pty.openpty()
        columns, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns),
               "LINES": str(rows)}
        self.proc = subprocess.Popen([*BOOTLAB, port, "--sessions", str(folder), *extra],
                                     stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True)
        os.close(slave)
        self._screen = bytearray()
        self._drawn = 0
        self._mark = 0
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            with self._lock:
                if not data:
                    self._drawn = -1
                    self._lock.notify_all()
                    return
                self._screen += data
                self._drawn += len(data)
                excess = len(self._screen) - self.KEEP
                if excess > 0:
                    del self._screen[:excess]
                self._lock.notify_all()

    def mark(self) -> None:
        """From now on `wait_for` only looks at what is drawn after this."""
        with self._lock:
            self._mark = self._drawn

    def wait_for(self, text: bytes, timeout_s: float = 20) -> float:
        """Wait until the app draws `text` (after the mark); when it did (time.monotonic)."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while True:
                if self._drawn < 0:
                    raise AssertionError(f"the app ended before drawing {text!r}: "
                                         f"{self.drawn_text()}")
                fresh = self._drawn - self._mark
                if text in self._screen[-min(fresh, len(self._screen)):] if fresh else b"":
                    return time.monotonic()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the app did not draw {text!r} in {timeout_s} s: "
                                         f"{self.drawn_text()}")
                self._lock.wait(left)

    def drawn_text(self, size: int = 3000) -> str:
        """The end of what the app drew, escape sequences removed (for failure messages)."""
        tail = bytes(self._screen[-size:]).decode("utf-8", "replace")
        return re.sub(r"\x1b(\[[0-9;?<>]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])", " ", tail)

    def type(self, data: bytes) -> None:
        """Keys pressed at the app's terminal."""
        os.write(self.master, data)

    def kill(self) -> None:
        """kill -9, and wait for it."""
        self.proc.kill()
        self.proc.wait(timeout=20)

    def close(self) -> None:
        """End it if still running and release the terminal."""
        if self.proc.poll() is None:
            self.kill()
        self._reader.join(timeout=5)
        with contextlib.suppress(OSError):
            os.close(self.master)
