"""One port, one user: UUCP lock files, and naming whoever holds a port.

Serial terminal programs (minicom, picocom, tio, cu) agree on a lock file per device,
`/var/lock/LCK..ttyUSB0`, holding the owner's PID as ten ASCII digits and a newline (the HDB
UUCP format). Taking the same lock keeps bootlab and those programs off each other's port even
where flock() or TIOCEXCL would not (root ignores TIOCEXCL; flock is advisory). A lock whose
process is gone is stale and is taken over. Without a writable lock folder the lock file is
skipped and the port's own flock/TIOCEXCL are all there is.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from bootlab.transports.errors import PortError

LOCK_DIR_ENV = "BOOTLAB_LOCK_DIR"
"""Environment variable naming the lock folder (tests use their own)."""
DEFAULT_LOCK_DIR = Path("/var/lock")


def lock_dir() -> Path:
    """The folder that holds the lock files."""
    return Path(os.environ.get(LOCK_DIR_ENV) or DEFAULT_LOCK_DIR)


def lock_name(device: str) -> str:
    """`LCK..` and the device's name under /dev, with '/' as '_' (/dev/pts/3 -> LCK..pts_3)."""
    real = os.path.realpath(device)
    name = real[len("/dev/"):] if real.startswith("/dev/") else os.path.basename(real)
    return "LCK.." + name.replace("/", "_")


def describe_pid(pid: int) -> str:
    """`comm (pid N)`, from /proc; `pid N` if the process cannot be inspected."""
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return f"pid {pid}"
    return f"{comm} (pid {pid})"


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (one we may not signal counts too)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def holders(device: str) -> list[str]:
    """Processes that have the device open, found by scanning /proc/*/fd (best effort)."""
    real = os.path.realpath(device)
    found: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target == real:
                found.append(describe_pid(int(entry.name)))
                break
    return found


def _read_pid(path: Path) -> int | None:
    """The PID in a lock file (ASCII, as HDB UUCP writes it), or None if unreadable."""
    try:
        text = path.read_bytes()[:64].decode("ascii").strip()
        return int(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


class UucpLock:
    """A held lock file; `release()` removes it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def acquire(cls, device: str) -> UucpLock | None:
        """Take the device's lock file; None when there is no writable lock folder.

        Raises:
            PortError: a live process holds the lock (it is named).
        """
        folder = lock_dir()
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            return None
        path = folder / lock_name(device)
        scratch = folder / f".bootlab-{os.getpid()}-{uuid.uuid4().hex}"
        try:
            scratch.write_text(f"{os.getpid():>10}\n")
            os.chmod(scratch, 0o644)
            for _ in range(3):
                try:
                    os.link(scratch, path)  # atomic: the lock appears complete or not at all
                except FileExistsError:
                    pid = _read_pid(path)
                    if pid is not None and pid_alive(pid):
                        raise PortError(f"{device}: port is in use by {describe_pid(pid)} "
                                        f"(lock file {path})") from None
                    if _read_pid(path) == pid:  # stale, and not just replaced by someone
                        with contextlib.suppress(FileNotFoundError):
                            path.unlink()
                    continue
                return cls(path)
        except PermissionError:
            return None
        finally:
            with contextlib.suppress(OSError):
                scratch.unlink()
        raise PortError(f"{device}: cannot take the lock file {path} (others keep taking it)")

    def release(self) -> None:
        """Remove the lock file if it is still ours."""
        if _read_pid(self.path) == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
