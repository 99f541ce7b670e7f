"""Serial devices by path (/dev/ttyUSB0, /dev/pts/3): exclusive use, and timing warnings.

A device is held three ways, because each one alone has holes: the UUCP lock file that other
terminal programs honour (lock.py), flock() (pyserial's `exclusive=True`, honoured by other
pyserial programs) and TIOCEXCL (the kernel refuses further opens, except to root). A refusal
names the holder: from the lock file's PID, or by looking for the device in /proc/*/fd.

USB serial adapters (FTDI and friends) hold received bytes for up to their latency timer
(16 ms by default) before sending them to the host, so every stamp can be that late; the
timer is in sysfs and can be set to 1 ms.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import termios
from pathlib import Path

import serial

from bootlab.transports.errors import PortError
from bootlab.transports.lock import UucpLock, holders

SYSFS_ROOT_ENV = "BOOTLAB_SYSFS_ROOT"
"""Environment variable naming the sysfs root (tests fake it)."""


class DeviceSerial(serial.Serial):
    """A pyserial port on a device path, held exclusively (lock file, flock, TIOCEXCL).

    Unlike pyserial it keeps what is already waiting when it opens (a pty's other end may have
    written before a reconnection): everything the board sent is console output.
    """

    _uucp: UucpLock | None = None
    _opening = False

    def open(self) -> None:
        """Take the lock file, open the device with flock(), set TIOCEXCL.

        Raises:
            PortError: another process holds the port (named when it can be found).
            serial.SerialException: any other failure to open.
        """
        device = str(self.portstr)
        self._uucp = UucpLock.acquire(device)
        try:
            self._opening = True
            super().open()
        except serial.SerialException as error:
            self._release()
            if error.errno in (errno.EAGAIN, errno.EBUSY):
                found = holders(device)
                who = ", ".join(found) if found else "another program"
                raise PortError(f"{device}: port is in use by {who}") from None
            raise
        finally:
            self._opening = False
        if self.fd is not None:
            with contextlib.suppress(OSError):  # not a tty (a FIFO, say): flock still holds
                fcntl.ioctl(self.fd, termios.TIOCEXCL)

    def _reset_input_buffer(self) -> None:
        if not self._opening and self.fd is not None:
            termios.tcflush(self.fd, termios.TCIFLUSH)

    def close(self) -> None:
        """Clear TIOCEXCL (a pty keeps it while its master lives), close, drop the lock."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                fcntl.ioctl(self.fd, termios.TIOCNXCL)
        super().close()
        self._release()

    def _release(self) -> None:
        if self._uucp is not None:
            self._uucp.release()
            self._uucp = None


def sysfs_root() -> Path:
    """The sysfs mount point."""
    return Path(os.environ.get(SYSFS_ROOT_ENV) or "/sys")


def latency_warning(url: str) -> str | None:
    """A warning when a USB serial adapter's latency timer delays stamps by more than 1 ms."""
    if "://" in url or url.startswith("exec:"):
        return None
    name = os.path.basename(os.path.realpath(url))
    timer = sysfs_root() / "bus" / "usb-serial" / "devices" / name / "latency_timer"
    try:
        ms = int(timer.read_text().strip())
    except (OSError, ValueError):
        return None
    if ms <= 1:
        return None
    return (f"{url}: the USB serial adapter's latency timer is {ms} ms, so stamps can be late "
            f"by up to {ms} ms; set it to 1 ms: `echo 1 | sudo tee "
            f"/sys/bus/usb-serial/devices/{name}/latency_timer` (or `sudo setserial "
            f"/dev/{name} low_latency`)")
