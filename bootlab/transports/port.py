"""Opening a port by device path or URL.

`open_port` takes a device path (/dev/ttyUSB0, /dev/pts/3: held exclusively, see device.py), a
pyserial URL (socket://host:port, rfc2217://host:port, ...) or `exec:COMMAND` (execport.py),
in non-blocking mode (timeout 0) so one read returns everything waiting. A port with no file
descriptor to wait on (rfc2217://) gets a short read timeout instead, set before it opens (on
rfc2217 a later change is a network round trip): readers block in read() for the first byte.
Reading is reader.py's: it stamps on its own thread (bench/bench_stamping.py shows why).
"""

from __future__ import annotations

import errno
import io

import serial
from serial import rfc2217
from serial.urlhandler import protocol_socket

from bootlab.transports.device import DeviceSerial
from bootlab.transports.errors import PortError
from bootlab.transports.execport import PREFIX as EXEC_PREFIX
from bootlab.transports.execport import ExecSerial
from bootlab.transports.line import SerialLine

__all__ = ["PortError", "SerialLine", "has_descriptor", "open_port"]

BLOCKING_READ_S = 0.05
"""Read timeout of ports without a descriptor, so a blocked reader still notices a close."""


class _KeepInputWhileOpening:
    """pyserial empties the input buffer when it opens a port: keep what arrives meanwhile
    (QEMU's first output, what a console server buffered)."""

    _opening = False

    def open(self) -> None:
        """Open, keeping the input."""
        self._opening = True
        try:
            super().open()  # type: ignore[misc]
        finally:
            self._opening = False

    def reset_input_buffer(self) -> None:
        """Drop what is waiting, except while opening."""
        if not self._opening:
            super().reset_input_buffer()  # type: ignore[misc]


class SocketSerial(_KeepInputWhileOpening, protocol_socket.Serial):
    """socket://, keeping what the server sends at once."""


class Rfc2217Serial(_KeepInputWhileOpening, rfc2217.Serial):
    """rfc2217://, keeping what the server has buffered."""


URL_CLASSES: dict[str, type[SocketSerial] | type[Rfc2217Serial]] = {
    "socket": SocketSerial, "rfc2217": Rfc2217Serial}
"""URL schemes whose pyserial class is replaced by one that never drops input at open."""


def has_descriptor(port: serial.SerialBase) -> bool:
    """Whether the port's class gives a file descriptor to wait on (rfc2217:// does not)."""
    return type(port).fileno is not io.RawIOBase.fileno


def open_port(url: str, baud: int, line: SerialLine | None = None) -> serial.SerialBase:
    """Open a device path, a pyserial URL or `exec:COMMAND`, non-blocking, framed as `line`
    says (default 8N1, no flow control).

    Raises:
        PortError: with the reason and a hint.
    """
    port: serial.Serial | SocketSerial | Rfc2217Serial | ExecSerial
    scheme, is_url, _ = url.partition("://")
    try:
        if url.startswith(EXEC_PREFIX):
            port = ExecSerial(None, baudrate=baud, timeout=0)
        elif is_url and scheme.lower() in URL_CLASSES:
            port = URL_CLASSES[scheme.lower()](None, baudrate=baud, timeout=0)
        elif is_url:
            port = serial.serial_for_url(url, baudrate=baud, timeout=0, do_not_open=True)
        else:
            port = DeviceSerial(None, baudrate=baud, timeout=0, exclusive=True)
        port.port = url
        if not has_descriptor(port):
            port.timeout = BLOCKING_READ_S
        (line or SerialLine()).apply(port)
        port.open()
    except (serial.SerialException, OSError, ValueError) as error:
        raise PortError(_explain(url, error)) from None
    return port


def _explain(url: str, error: Exception) -> str:
    """Say what went wrong opening a port, and what to do about it."""
    code = getattr(error, "errno", None)
    text = str(error)
    if url.startswith(EXEC_PREFIX):
        return f"{url}: {text}"
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
