"""A labgrid board farm on 127.0.0.1, from real parts: `labgrid-coordinator`, a
`labgrid-exporter --hostname 127.0.0.1` exporting each board's console (a pty) as a
`RawSerialPort`, which the exporter serves through Debian's `ser2net` once the place is
acquired, and a `NetworkPowerPort` of model `simplerest` switched by our HTTP power server
(tests/support/power_server.py), which starts and stops the board. Places are made with
`labgrid-client create` and `add-match`, as a lab's admin makes them.

The board's console is a pty whose other side stays with the farm, like a USB serial adapter
that stays plugged in while the board behind it is powered off and on: ser2net opens it when a
client connects, before the board is powered. Behind it is either the fake board
(tests/support/fake_board.py, a boot to login in about a second) or the QEMU board (a copy,
`BoardCopy`, started by `run-board.sh --serial tcp:PORT` at power-on and relayed to the pty).

`farm_parts` makes the parts; the fixtures (`fake_farm`, `qemu_farm`, and `fake_pair_farm`,
`qemu_pair_farm` of two boards whose places carry the tag `board=...`, registered in
tests/conftest.py) skip without labgrid or ser2net, and fail when BOOTLAB_REQUIRE_LABGRID is
set (CI).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from support.board_variants import BoardCopy
from support.fake_board import FakeBoard
from support.paths import BOARD_OUT, LAB
from support.power_server import Outlet, PowerServer
from support.pty_pair import Pty

BIN = Path(sys.executable).parent
"""Where the venv's labgrid tools are."""
START_S = 20.0
"""How long a labgrid process may take to come up (python imports grpc first)."""


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def need_farm_tools() -> None:
    """Skip (fail under BOOTLAB_REQUIRE_LABGRID) without labgrid's tools or ser2net."""
    missing = [name for name in ("labgrid-coordinator", "labgrid-exporter", "labgrid-client")
               if not (BIN / name).exists()]
    if shutil.which("ser2net") is None and not Path("/usr/sbin/ser2net").exists():
        missing.append("ser2net (apt-get install ser2net)")
    if missing:
        why = f"the board farm needs {', '.join(missing)} (scripts/test installs them)"
        if os.environ.get("BOOTLAB_REQUIRE_LABGRID"):
            pytest.fail(why)
        pytest.skip(why)


class FakeOutlet:
    """The fake board behind the adapter pty: each power-on boots it anew (`line_s`: what each
    kernel line costs; the default boots to login in about a second)."""

    def __init__(self, adapter: Pty, line_s: float = 0.001) -> None:
        self.adapter = adapter
        self.line_s = line_s
        self.board: FakeBoard | None = None
        self.power_ons = 0

    def on(self) -> None:
        if self.board is None:
            self.board = FakeBoard(self.adapter, second_s=0.1, line_s=self.line_s)
            self.power_ons += 1
            self.board.power_on()

    def off(self) -> None:
        board, self.board = self.board, None
        if board is not None:
            board.power_off()


class QemuOutlet:
    """The QEMU board (a copy of its folder) behind the adapter pty: power-on starts
    run-board.sh with its console on TCP and relays that to the pty; power-off ends it."""

    def __init__(self, copy: BoardCopy, adapter: Pty) -> None:
        self.copy = copy
        self.adapter = adapter
        self.process: subprocess.Popen[bytes] | None = None
        self.power_ons = 0
        self._relay: threading.Thread | None = None
        self._stop = threading.Event()

    def on(self) -> None:
        if self.process is not None:
            return
        port = free_port()
        factory = ["--factory-env"] if self.power_ons == 0 else []
        self.process = subprocess.Popen(
            ["bash", str(LAB / "run-board.sh"), "--out", str(self.copy.folder), "--serial",
             f"tcp:{port}", *factory], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not _proc_listening(port):  # connecting powers it on: only look until then
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.off()
                raise RuntimeError("the QEMU board did not open its console port")
            time.sleep(0.05)
        wire = socket.create_connection(("127.0.0.1", port))
        self.power_ons += 1
        self._stop.clear()
        self._relay = threading.Thread(target=self._carry, args=(wire,), daemon=True,
                                       name="qemu relay")
        self._relay.start()

    def _carry(self, wire: socket.socket) -> None:
        """Bytes both ways between the board's TCP console and the adapter pty. Keys typed
        before the board has printed anything are dropped, as a real UART drops what arrives
        before it is set up: QEMU's PL011 would take one, lose it when U-Boot enables the
        FIFO, and then read no more input until the guest reads a byte, which U-Boot never
        does with none waiting (autoboot could not be stopped on that boot)."""
        master = self.adapter.master
        awake = False
        with wire:
            while not self._stop.is_set():
                ready, _, _ = select.select([wire, master], [], [], 0.1)
                if wire in ready:
                    try:
                        data = wire.recv(65536)
                    except ConnectionResetError:  # powered off with our keys unread
                        return
                    if not data:
                        return
                    awake = True
                    self.adapter.write(data)
                if master in ready:
                    keys = os.read(master, 65536)
                    if awake:
                        with contextlib.suppress(OSError):
                            wire.sendall(keys)

    def off(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        self._stop.set()
        if self._relay is not None:
            self._relay.join(timeout=5)
            self._relay = None


def _proc_listening(port: int) -> bool:
    wanted = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(row.split()[1].endswith(wanted) and row.split()[3] == "0A"
                   for row in list(table)[1:])


@dataclass
class Farm:
    """A coordinator, an exporter of our boards, the power switch, and how to reach them."""

    folder: Path
    port: int
    power: PowerServer
    outlets: dict[str, Outlet]
    """Board (exporter group) name -> what its power switch powers."""
    adapters: dict[str, Pty]
    exporter_name: str = "farm-exporter"
    coordinator: subprocess.Popen[bytes] | None = None
    exporter: subprocess.Popen[bytes] | None = None
    logs: list[Path] = field(default_factory=list)

    @property
    def address(self) -> str:
        """The coordinator, as LG_COORDINATOR says it."""
        return f"127.0.0.1:{self.port}"

    def env(self, user: str | None = None) -> dict[str, str]:
        """The environment of a labgrid client (bootlab or labgrid-client) of this farm."""
        env = {**os.environ, "LG_COORDINATOR": self.address}
        env.pop("LG_PLACE", None)
        if user is not None:
            env["LG_USERNAME"] = user
        return env

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = self.folder / f"{name}.log"
        self.logs.append(log)
        with log.open("ab") as out:
            return subprocess.Popen(argv, cwd=self.folder, stdout=out, stderr=out)

    def start_coordinator(self) -> None:
        """Start labgrid-coordinator (places persist in the folder's places.yaml)."""
        self.coordinator = self._spawn("coordinator", [str(BIN / "labgrid-coordinator"), "-l",
                                                       self.address])
        deadline = time.monotonic() + START_S
        while not _listening(self.port):
            if self.coordinator.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"labgrid-coordinator did not start: {self.log_tail()}")
            time.sleep(0.1)

    def kill_coordinator(self) -> None:
        """Kill the coordinator at once (SIGKILL: a crash, a host gone)."""
        if self.coordinator is not None:
            self.coordinator.kill()
            self.coordinator.wait(timeout=20)
            self.coordinator = None

    def stop_coordinator(self) -> None:
        """Stop the coordinator (it forgets every acquisition)."""
        if self.coordinator is not None:
            self.coordinator.terminate()
            self.coordinator.wait(timeout=20)
            self.coordinator = None

    def start_exporter(self) -> None:
        """Start labgrid-exporter with our boards and wait until the coordinator lists them
        (labgrid's exporter exits when it loses the coordinator; a lab restarts it)."""
        config = self.folder / "exporter.yaml"
        config.write_text("".join(
            f"{name}:\n"
            f"  RawSerialPort:\n    port: {self.adapters[name].name}\n    speed: 115200\n"
            f"  NetworkPowerPort:\n    model: simplerest\n"
            f"    host: '{self.power.template}'\n    index: {index}\n"
            for index, name in enumerate(self.outlets)))
        self.exporter = self._spawn("exporter", [
            str(BIN / "labgrid-exporter"), "-c", self.address, "-n", self.exporter_name,
            "--hostname", "127.0.0.1", str(config)])
        deadline = time.monotonic() + START_S
        while True:
            listed = self.client("resources", check=False).stdout
            if all(f"{self.exporter_name}/{name}/NetworkSerialPort" in listed
                   for name in self.outlets):
                return
            if self.exporter.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"labgrid-exporter did not register: {self.log_tail()}")
            time.sleep(0.2)

    def stop_exporter(self) -> None:
        if self.exporter is not None:
            self.exporter.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.exporter.wait(timeout=20)
            if self.exporter.poll() is None:
                self.exporter.kill()
                self.exporter.wait()
            self.exporter = None

    @contextlib.contextmanager
    def exporter_restarted(self) -> Iterator[None]:
        """While inside: the exporter is started again whenever it ends (as labgrid's
        systemd unit does: `Restart=always`; labgrid 26's exporter exits when it loses the
        coordinator)."""
        stop = threading.Event()

        def watch() -> None:
            while not stop.wait(0.2):
                if self.exporter is not None and self.exporter.poll() is not None:
                    self.exporter = None
                    with contextlib.suppress(RuntimeError):   # the coordinator is not back
                        self.start_exporter()

        watcher = threading.Thread(target=watch, daemon=True, name="exporter restarter")
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join(timeout=30)

    def restart_coordinator(self) -> None:
        """Restart the coordinator, and the exporter after it, as a lab's services would."""
        self.stop_coordinator()
        self.start_coordinator()
        if self.exporter is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.exporter.wait(timeout=20)  # it ends on losing the coordinator
        self.stop_exporter()
        self.start_exporter()

    def client(self, *args: str, user: str | None = None,
               check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run labgrid-client against this farm (as `user`, via LG_USERNAME)."""
        result = subprocess.run([str(BIN / "labgrid-client"), *args], env=self.env(user),
                                capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError(f"labgrid-client {' '.join(args)}: {result.stderr.strip()}")
        return result

    def add_place(self, place: str, board: str) -> None:
        """A place holding the board's resources, as a lab's admin makes it."""
        self.client("-p", place, "create")
        self.client("-p", place, "add-match", f"{self.exporter_name}/{board}/*")

    def set_tags(self, place: str, *tags: str) -> None:
        """Tag a place (`KEY=VALUE`), as `labgrid-client set-tags` does."""
        self.client("-p", place, "set-tags", *tags)

    def holder(self, place: str) -> str | None:
        """Who holds the place (`host/user`), as `labgrid-client show` says; None: nobody."""
        shown = self.client("-p", place, "show").stdout
        found = re.search(r"^\s*acquired:\s*(\S+)", shown, re.M)
        return None if found is None or found.group(1) == "None" else found.group(1)

    def wait_holder(self, place: str, wanted: str | None, timeout_s: float = 20.0) -> str | None:
        """Wait until `holder(place)` is `wanted` (a user name matches `host/user`)."""
        deadline = time.monotonic() + timeout_s
        while True:
            holder = self.holder(place)
            if holder == wanted or (wanted and holder and holder.endswith(f"/{wanted}")):
                return holder
            if time.monotonic() > deadline:
                return holder
            time.sleep(0.2)

    def log_tail(self) -> str:
        return " | ".join(log.read_text(errors="replace")[-600:] for log in self.logs
                          if log.exists())

    def close(self) -> None:
        self.stop_exporter()
        self.stop_coordinator()
        self.power.close()
        for adapter in self.adapters.values():
            adapter.close()


@contextlib.contextmanager
def farm_parts(folder: Path, outlets: dict[str, Outlet], adapters: dict[str, Pty],
               places: dict[str, str]) -> Iterator[Farm]:
    """A running farm in `folder`: the outlets' boards exported, `places` (place -> board)
    created. Everything is stopped at the end."""
    farm = Farm(folder, free_port(), PowerServer(dict(enumerate(outlets.values()))),
                outlets, adapters)
    try:
        farm.start_coordinator()
        farm.start_exporter()
        for place, board in places.items():
            farm.add_place(place, board)
        yield farm
    finally:
        farm.close()


@pytest.fixture(scope="module")
def fake_farm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    """A farm of one fake board, place `bench-1`."""
    need_farm_tools()
    adapter = Pty()
    with farm_parts(tmp_path_factory.mktemp("farm"), {"bench": FakeOutlet(adapter)},
                    {"bench": adapter}, {"bench-1": "bench"}) as farm:
        yield farm


@pytest.fixture(scope="module")
def fake_pair_farm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    """A farm of two fake boards, places `bench-a` and `bench-b`, both tagged `board=fake`."""
    need_farm_tools()
    adapters = {name: Pty() for name in ("a", "b")}
    outlets: dict[str, Outlet] = {name: FakeOutlet(adapter) for name, adapter in adapters.items()}
    with farm_parts(tmp_path_factory.mktemp("farm"), outlets, adapters,
                    {f"bench-{name}": name for name in adapters}) as farm:
        for name in adapters:
            farm.set_tags(f"bench-{name}", "board=fake")
        yield farm


def _need_qemu_board() -> None:
    need_farm_tools()
    if not (BOARD_OUT / "board.itb").is_file():
        if os.environ.get("BOOTLAB_REQUIRE_BOARD"):
            pytest.fail(f"the QEMU board is not built in {BOARD_OUT} (scripts/test builds it)")
        pytest.skip(f"the QEMU board is not built in {BOARD_OUT} (run scripts/test as root)")


@contextlib.contextmanager
def _qemu_farm(folder: Path, names: list[str]) -> Iterator[Farm]:
    """A farm of QEMU boards (each a copy of .lab/board), place `qemu-NAME` for each."""
    adapters = {name: Pty() for name in names}
    outlets: dict[str, Outlet] = {name: QemuOutlet(BoardCopy.make(folder / name), adapter)
                                  for name, adapter in adapters.items()}
    with farm_parts(folder, outlets, adapters, {f"qemu-{name}": name for name in names}) as farm:
        yield farm


@pytest.fixture(scope="module")
def qemu_farm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    """A farm of one QEMU board, place `qemu-1`."""
    _need_qemu_board()
    with _qemu_farm(tmp_path_factory.mktemp("qemu-farm"), ["1"]) as farm:
        yield farm


@pytest.fixture(scope="module")
def qemu_pair_farm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    """A farm of two QEMU boards, places `qemu-a` and `qemu-b`, both tagged `board=qemu`.
    The power switch answers one switch at a time, so two boards powered on together start
    one after the other (QEMU up and its console open), then boot side by side."""
    _need_qemu_board()
    with _qemu_farm(tmp_path_factory.mktemp("qemu-farm"), ["a", "b"]) as farm:
        for name in ("a", "b"):
            farm.set_tags(f"qemu-{name}", "board=qemu")
        yield farm
