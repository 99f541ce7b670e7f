"""A raw pseudo-terminal pair: the test plays the board on `master`, bootlab opens `name`."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import termios
import time
import tty


class Pty:
    """A raw pseudo-terminal pair: the test writes to `master`, bootlab opens `name`."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        attrs = termios.tcgetattr(self.slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(self.slave, termios.TCSANOW, attrs)
        self.name = os.ttyname(self.slave)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.master, view)
            view = view[written:]

    def read(self, wanted: int, timeout_s: float = 5.0) -> bytes:
        """What bootlab sent to the board: at least `wanted` bytes, or what came in time."""
        data = b""
        deadline = time.monotonic() + timeout_s
        while len(data) < wanted and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.05)[0]:
                data += os.read(self.master, 1024)
        return data

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)
