"""`exec:COMMAND`: a local program as the console (QEMU `-serial stdio`, a simulator, ssh).

The command runs on a new pseudo-terminal in raw mode, in its own session, with the pty's
slave as stdin, stdout and stderr; bootlab reads and writes the master like a serial port, so
a program that only talks to its terminal behaves exactly as on a wire. The command line is
split like a shell would (shlex) but no shell runs unless the command is one (`sh -c '...'`);
leading `NAME=value` words set environment variables. Closing the port ends the command
(SIGTERM to its process group, SIGKILL if it lingers).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import select
import shlex
import signal
import struct
import subprocess
import termios
import tty
from typing import TYPE_CHECKING

import serial
from serial.serialutil import PortNotOpenError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

PREFIX = "exec:"
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def parse_command(url: str) -> tuple[list[str], dict[str, str]]:
    """The argv and extra environment of `exec:[NAME=value ...] PROGRAM ARGS`."""
    words = shlex.split(url[len(PREFIX):])
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if not words:
        raise ValueError(f"{url}: no command after exec:")
    return words, env


class ExecSerial(serial.SerialBase):
    """A pyserial port whose far end is a command on a pseudo-terminal."""

    _fd: int | None = None
    _child: subprocess.Popen[bytes] | None = None

    def open(self) -> None:
        """Start the command on a new raw pty.

        Raises:
            serial.SerialException: the command cannot be run.
        """
        if self.is_open:
            raise serial.SerialException("port is already open")
        argv, env = parse_command(str(self.portstr))
        master, slave = os.openpty()
        try:
            tty.setraw(slave)
            self._child = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                           env={**os.environ, **env}, start_new_session=True)
        except OSError as error:
            os.close(master)
            raise serial.SerialException(f"cannot run {argv[0]}: "
                                         f"{error.strerror or error}") from None
        finally:
            os.close(slave)  # the command's copies are the only ones: its exit means EOF
        os.set_blocking(master, False)
        self._fd = master
        self.is_open = True

    def _reconfigure_port(self, force_update: bool = False) -> None:
        """Nothing to apply: a pty to a local command has no line speed or framing."""

    def fileno(self) -> int:
        """The pty master, to wait on with select()/poll()."""
        if self._fd is None:
            raise PortNotOpenError()
        return self._fd

    @property
    def in_waiting(self) -> int:
        """Bytes waiting in the pty."""
        raw = fcntl.ioctl(self.fileno(), termios.FIONREAD, b"\0\0\0\0")
        return int(struct.unpack("i", raw)[0])

    def read(self, size: int = 1) -> bytes:
        """What is waiting, up to `size` bytes, without blocking.

        Raises:
            serial.SerialException: the command has ended (its terminal is closed).
        """
        try:
            return os.read(self.fileno(), size)
        except BlockingIOError:
            return b""
        except OSError as error:
            if error.errno == errno.EIO:
                raise serial.SerialException(self.end_reason()) from None
            raise serial.SerialException(error.errno, f"read failed: {error}") from None

    def end_reason(self) -> str:
        """Why the terminal closed: the command ended, with its exit status when known."""
        status = None
        if self._child is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = self._child.wait(timeout=0.5)
        return "the command ended" + ("" if status is None else f" (exit status {status})")

    def write(self, data: ReadableBuffer, /) -> int:
        """Send all of `data` to the command's terminal."""
        fd = self.fileno()
        view = memoryview(data).cast("B")
        total = len(view)
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                select.select([], [fd], [], 1.0)
            except OSError as error:
                raise serial.SerialException(error.errno, f"write failed: {error}") from None
        return total

    def reset_input_buffer(self) -> None:
        """Drop what the command wrote and nobody has read."""
        termios.tcflush(self.fileno(), termios.TCIFLUSH)

    def reset_output_buffer(self) -> None:
        """Drop what was sent and the command has not read."""
        termios.tcflush(self.fileno(), termios.TCOFLUSH)

    def close(self) -> None:
        """End the command (its whole process group) and close the pty."""
        child, self._child = self._child, None
        if child is not None:
            with contextlib.suppress(ProcessLookupError):  # its children too, if it has gone
                os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=3)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.is_open = False
