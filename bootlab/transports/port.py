"""Serial ports by device path or pyserial URL, read so that each chunk is stamped on arrival.

The read loop waits in select() on the port's file descriptor and takes CLOCK_MONOTONIC as soon
as it wakes, before reading: the stamp is when the first byte of the chunk was available to us,
not when a consumer got round to it. The port is put in non-blocking mode (timeout 0), so one
read returns everything waiting, whatever the transport (tty, pty, socket://).
"""

from __future__ import annotations

import errno
import select
import time
from collections.abc import Callable, Iterator

import serial


class PortError(Exception):
    """The port could not be opened or stopped working; the message says what to do."""


def open_port(url: str, baud: int) -> serial.SerialBase:
    """Open a device path (/dev/ttyUSB0, /dev/pts/3) or a pyserial URL (socket://host:port).

    Raises:
        PortError: with the reason and a hint.
    """
    try:
        port = serial.serial_for_url(url, baudrate=baud, timeout=0, exclusive=True,
                                     do_not_open=True)
        port.open()
    except (serial.SerialException, OSError, ValueError) as error:
        raise PortError(_explain(url, error)) from None
    return port


def _explain(url: str, error: Exception) -> str:
    """Say what went wrong opening a port, and what to do about it."""
    code = getattr(error, "errno", None)
    text = str(error)
    if code == errno.ENOENT or "No such file" in text:
        return (f"{url}: no such port; is the adapter plugged in? "
                "(`bootlab ports` lists the serial ports)")
    if code == errno.EACCES or "Permission denied" in text:
        return (f"{url}: permission denied; add yourself to the 'dialout' group "
                "(sudo usermod -aG dialout $USER, then log in again)")
    if code in (errno.EAGAIN, errno.EBUSY) or "lock" in text.lower():
        return f"{url}: port is in use by another program ({text})"
    if code == errno.ECONNREFUSED or "refused" in text:
        return f"{url}: connection refused; is the console server (ser2net, QEMU) listening?"
    return f"{url}: cannot open: {text}"


def read_chunks(port: serial.SerialBase, stop: Callable[[], bool],
                poll_s: float = 0.05) -> Iterator[tuple[bytes, int]]:
    """Yield `(data, t_ns)` as bytes arrive, and `(b"", now)` every `poll_s` while idle.

    Raises:
        PortError: the port went away (adapter unplugged, socket closed by the peer).
    """
    try:
        fd: int | None = port.fileno()
    except (AttributeError, serial.SerialException, OSError):
        fd = None
        port.timeout = poll_s  # no descriptor to wait on: let read() wait for the first byte
    while not stop():
        try:
            if fd is not None:
                ready, _, _ = select.select([fd], [], [], poll_s)
                t_ns = time.monotonic_ns()
                if not ready:
                    yield b"", t_ns
                    continue
                data = port.read(1 << 16)
                if not data:
                    raise PortError(f"{port.name}: the port closed (device gone or peer "
                                    "disconnected)")
            else:
                data = port.read(getattr(port, "in_waiting", 0) or 1)
                t_ns = time.monotonic_ns()
        except serial.SerialException as error:
            raise PortError(f"{port.name}: the port stopped working: {error}") from None
        except OSError as error:
            raise PortError(f"{port.name}: read failed: {error.strerror or error}") from None
        yield data, t_ns
