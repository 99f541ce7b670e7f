"""Shared fixtures: an isolated config folder, real pseudo-terminals, a TCP console server, the
QEMU board. Helpers the tests import are in tests/support/."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.board_variants import BoardCopy
from support.farm import (  # noqa: F401 (fixtures: the labgrid farm)
    fake_farm,
    fake_pair_farm,
    qemu_farm,
    qemu_pair_farm,
)
from support.paths import BOARD_OUT, LAB, LAB3, LAB3_OUT
from support.pty_pair import Pty
from support.tmux import tmux  # noqa: F401 (the fixture: a real terminal for the app)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's own config or profiles, or leaves lock files behind."""
    monkeypatch.setenv("BOOTLAB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("BOOTLAB_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))


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


def _listening(port: int) -> bool:
    wanted = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(row.split()[1].endswith(wanted) and row.split()[3] == "0A"
                   for row in list(table)[1:])


@pytest.fixture
def board_copy(tmp_path: Path) -> BoardCopy:
    """A test's own copy of the QEMU board folder, to change and power on
    (tests/support/board_variants.py)."""
    if not (BOARD_OUT / "board.itb").is_file():
        if os.environ.get("BOOTLAB_REQUIRE_BOARD"):
            pytest.fail(f"the QEMU board is not built in {BOARD_OUT} (scripts/test builds it)")
        pytest.skip(f"the QEMU board is not built in {BOARD_OUT} (run scripts/test as root)")
    return BoardCopy.make(tmp_path / "board")


@pytest.fixture
def board_url() -> Iterator[str]:
    """The real QEMU board, factory environment, console on TCP (QEMU's own: output as fast as
    the emulation prints it); it powers on at connect."""
    yield from _board()


@pytest.fixture
def board_url_115200() -> Iterator[str]:
    """The same board behind the lab's 115200-baud UART proxy (`run-board.sh --baud 115200`):
    the kernel waits on its console as on hardware, so what it prints costs boot time."""
    yield from _board("--baud", "115200")


@pytest.fixture
def lab3_url() -> Iterator[str]:
    """Board #3 (`../shared/lab3`): an x86 board with Debian's U-Boot, GRUB reading
    extlinux.conf on an ext4 /boot, an environment that cannot be saved, systemd; its disk
    as built at every power-on (`--snapshot`), console on TCP; it powers on at connect."""
    if not (LAB3 / "run-board.sh").is_file():
        pytest.skip(f"board #3 is not in {LAB3}")
    yield from _board("--snapshot", board=LAB3_OUT, lab=LAB3, require="BOOTLAB_REQUIRE_LAB3",
                      built="disk.img")


def _board(*options: str, board: Path = BOARD_OUT, lab: Path = LAB,
           require: str = "BOOTLAB_REQUIRE_BOARD", built: str = "board.itb") -> Iterator[str]:
    import subprocess
    import time

    if not (board / built).is_file():
        if os.environ.get(require):
            pytest.fail(f"the QEMU board is not built in {board} (scripts/test builds it)")
        pytest.skip(f"the QEMU board is not built in {board} (run scripts/test as root)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(["bash", str(lab / "run-board.sh"), "--out", str(board),
                                "--serial", f"tcp:{port}", "--factory-env", *options],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not _listening(port):  # connecting would power the board on: only look
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail("the QEMU board did not open its console port")
        time.sleep(0.1)
    yield f"socket://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=30)


