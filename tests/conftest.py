"""Shared fixtures: real pseudo-terminals, a TCP console server, paths to the bundled sessions."""

from __future__ import annotations

import contextlib
import os
import pty
import socket
import sys
import termios
import tty
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "sessions"
BOOTLAB = [sys.executable, "-m", "bootlab"]


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's own config or profiles, or leaves lock files behind."""
    monkeypatch.setenv("BOOTLAB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("BOOTLAB_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))


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

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
def pty_pair() -> Iterator[Pty]:
    pair = Pty()
    yield pair
    pair.close()


@pytest.fixture
def tcp_server() -> Iterator[socket.socket]:
    """A listening TCP socket on 127.0.0.1 (a console server such as ser2net or QEMU)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)
    yield server
    server.close()


def example_sessions(label: str | None = None) -> list[Path]:
    """The bundled example sessions (optionally those with one label)."""
    paths = sorted(EXAMPLES.glob("*.jsonl"))
    return [p for p in paths if label is None or f"-{label}-" in p.name]


LAB = ROOT.parent / "shared" / "lab"
BOARD_OUT = Path(os.environ.get("BOARD_OUT", ROOT / ".lab" / "board"))


def _listening(port: int) -> bool:
    wanted = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(row.split()[1].endswith(wanted) and row.split()[3] == "0A"
                   for row in list(table)[1:])


@pytest.fixture
def board_url() -> Iterator[str]:
    """The real QEMU board, factory environment, console on TCP; it powers on at connect."""
    import subprocess
    import time

    if not (BOARD_OUT / "board.itb").is_file():
        if os.environ.get("BOOTLAB_REQUIRE_BOARD"):
            pytest.fail(f"the QEMU board is not built in {BOARD_OUT} (scripts/test builds it)")
        pytest.skip(f"the QEMU board is not built in {BOARD_OUT} (run scripts/test as root)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    board = subprocess.Popen(["bash", str(LAB / "run-board.sh"), "--serial", f"tcp:{port}",
                              "--factory-env"],
                             env={**os.environ, "BOARD_OUT": str(BOARD_OUT)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not _listening(port):  # connecting would power the board on: only look
        if board.poll() is not None or time.monotonic() > deadline:
            board.kill()
            pytest.fail("the QEMU board did not open its console port")
        time.sleep(0.1)
    yield f"socket://127.0.0.1:{port}"
    board.terminate()
    board.wait(timeout=30)
