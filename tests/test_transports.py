"""Transports: the stamping reader, exec: and rfc2217:// ports, port locks, latency warnings."""

from __future__ import annotations

import fcntl
import os
import shlex
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial
from serial import rfc2217
from support.paths import BOARD_OUT, BOOTLAB, LAB
from support.pty_pair import Pty

from bootlab.transports.device import latency_warning
from bootlab.transports.execport import parse_command
from bootlab.transports.lock import lock_name
from bootlab.transports.port import PortError, open_port
from bootlab.transports.reader import (
    FAST_SWITCH_S,
    Chunk,
    Event,
    Idle,
    StampingReader,
    default_reconnect,
)

TIOCGEXCL = getattr(termios, "TIOCGEXCL", 0x80045440)  # Linux >= 3.8


@pytest.fixture(autouse=True)
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Lock files go to a folder of the test's own."""
    folder = tmp_path / "lock"
    folder.mkdir()
    monkeypatch.setenv("BOOTLAB_LOCK_DIR", str(folder))
    return folder


def collect(reader: StampingReader, until: bytes, timeout: float = 10) -> list[Chunk]:
    """Chunks until `until` has arrived (fails after `timeout`)."""
    chunks: list[Chunk] = []
    deadline = time.monotonic() + timeout
    for event in reader.events(lambda: time.monotonic() > deadline):
        if isinstance(event, Chunk):
            chunks.append(event)
            if until in b"".join(c.data for c in chunks):
                return chunks
    raise AssertionError(f"{until!r} never came: {b''.join(c.data for c in chunks)!r}")


def stamp_of(chunks: list[Chunk], text: bytes) -> int:
    """The stamp of the chunk that carried the first byte of `text`."""
    data = b"".join(c.data for c in chunks)
    start = data.index(text)
    offset = 0
    for chunk in chunks:
        offset += len(chunk.data)
        if offset > start:
            return chunk.t_ns
    raise AssertionError(text)


# -- the stamping reader ---------------------------------------------------------------------


def test_reader_stamps_each_chunk_when_it_arrives(pty_pair: Pty) -> None:
    with StampingReader(pty_pair.name, 115200) as reader:
        sent = []
        for i in range(3):
            sent.append(time.monotonic_ns())
            pty_pair.write(b"line %d\r\n" % i)
            time.sleep(0.1)
        chunks = collect(reader, b"line 2\r\n")
        for i, t_sent in enumerate(sent):
            assert 0 <= stamp_of(chunks, b"line %d" % i) - t_sent < 20_000_000
        events: list[Event] = []
        deadline = time.monotonic() + 0.2
        events.extend(reader.events(lambda: time.monotonic() > deadline, poll_s=0.02))
        assert events and all(isinstance(e, Idle) for e in events)


def test_a_busy_consumer_does_not_delay_the_stamps(pty_pair: Pty) -> None:
    """The consumer spins in Python for 80 ms; a line sent meanwhile keeps its true time."""
    writer = ("import os, sys, time\n"
              "time.sleep(0.03)\n"
              "t = time.monotonic_ns()\n"
              "os.write(int(sys.argv[1]), b'during the work\\r\\n')\n"
              "print(t)\n")
    with StampingReader(pty_pair.name, 115200) as reader:
        pty_pair.write(b"before\r\n")
        collect(reader, b"before\r\n")
        proc = subprocess.Popen([sys.executable, "-c", writer, str(pty_pair.master)],
                                pass_fds=[pty_pair.master], stdout=subprocess.PIPE, text=True)
        time.sleep(0.01)
        end = time.monotonic() + 0.08
        busy = 0
        while time.monotonic() < end:                 # holds the GIL, as framing would
            busy += sum(range(200))
        out, _ = proc.communicate(timeout=10)
        chunks = collect(reader, b"during the work\r\n")
    late_ms = (stamp_of(chunks, b"during") - int(out)) / 1e6
    assert busy and -1 < late_ms < 10, late_ms       # the old single-thread loop: ~50 ms


def test_bytes_waiting_before_the_port_opens_are_kept(pty_pair: Pty,
                                                     tcp_server: socket.socket) -> None:
    """pyserial flushes input when it opens a port; a recorder must not lose console output."""
    pty_pair.write(b"already there\r\n")
    with StampingReader(pty_pair.name, 115200) as reader:
        assert b"".join(c.data for c in collect(reader, b"\r\n")) == b"already there\r\n"
    port = tcp_server.getsockname()[1]
    with StampingReader(f"socket://127.0.0.1:{port}", 115200) as reader:
        conn, _ = tcp_server.accept()
        conn.sendall(b"sent at connect\r\n")          # QEMU powers on at connect
        assert b"".join(c.data for c in collect(reader, b"\r\n")) == b"sent at connect\r\n"
        conn.close()


def test_reader_thread_runs_at_real_time_priority_when_allowed(pty_pair: Pty) -> None:
    with StampingReader(pty_pair.name, 115200) as reader:
        (thread,) = [t for t in threading.enumerate()
                     if t.name == f"bootlab reader {pty_pair.name}"]
        assert thread.native_id is not None
        policy = os.sched_getscheduler(thread.native_id) & ~os.SCHED_RESET_ON_FORK
        assert policy == (os.SCHED_FIFO if reader.realtime else os.SCHED_OTHER)
        if os.geteuid() == 0:
            assert reader.realtime
    with StampingReader(pty_pair.name, 115200, realtime=False) as reader:
        assert not reader.realtime


def test_switch_interval_is_lowered_while_a_reader_runs(pty_pair: Pty) -> None:
    before = sys.getswitchinterval()
    with StampingReader(pty_pair.name, 115200):
        assert sys.getswitchinterval() == pytest.approx(min(before, FAST_SWITCH_S))
    assert sys.getswitchinterval() == before


def test_reader_writes_to_the_port(pty_pair: Pty) -> None:
    with StampingReader(pty_pair.name, 115200) as reader:
        reader.write(b"boot\r")
        time.sleep(0.1)
        assert os.read(pty_pair.master, 100) == b"boot\r"


def test_without_reconnect_a_lost_port_ends_after_every_byte(tmp_path: Path) -> None:
    pair = Pty()
    reader = StampingReader(pair.name, 115200)
    pair.write(b"kept\r\n")
    time.sleep(0.1)
    os.close(pair.master)                              # the adapter disappears
    got = b""
    with pytest.raises(PortError, match="stopped working"):
        for event in reader.events():
            if isinstance(event, Chunk):
                got += event.data
    reader.close()
    os.close(pair.slave)
    assert got == b"kept\r\n"


def test_reader_on_a_tcp_console_server(tcp_server: socket.socket) -> None:
    port = tcp_server.getsockname()[1]
    with StampingReader(f"socket://127.0.0.1:{port}", 115200) as reader:
        conn, _ = tcp_server.accept()
        conn.sendall(b"U-Boot 2023.01\r\n")
        assert b"U-Boot" in b"".join(c.data for c in collect(reader, b"\r\n"))
        reader.write(b" ")
        assert conn.recv(10) == b" "
        conn.close()


def test_reconnect_defaults() -> None:
    assert default_reconnect("/dev/ttyUSB0") and default_reconnect("socket://h:1")
    assert not default_reconnect("exec:qemu-system-aarch64")


# -- exec: -----------------------------------------------------------------------------------

PRINTER = ("import os, time\n"
           "print('pid', os.getpid(), flush=True)\n"
           "for i in range(3):\n"
           "    time.sleep(0.2)\n"
           "    print('tick', i, flush=True)\n"
           "time.sleep(60)\n")


def test_exec_runs_a_command_on_a_pty_and_ends_it_on_close() -> None:
    reader = StampingReader(f"exec:{sys.executable} -c {shlex.quote(PRINTER)}", 115200)
    try:
        chunks = collect(reader, b"tick 2\n")
    finally:
        reader.close()
    data = b"".join(c.data for c in chunks)
    assert data.startswith(b"pid ") and b"tick 0\ntick 1\ntick 2\n" in data
    gaps = [stamp_of(chunks, b"tick %d" % (i + 1)) - stamp_of(chunks, b"tick %d" % i)
            for i in range(2)]
    assert all(150e6 < gap < 300e6 for gap in gaps), gaps
    pid = int(data.split()[1])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_exec_child_gets_the_pty_and_its_input() -> None:
    echo = "import sys, os; print(os.isatty(0), sys.stdin.readline().strip(), flush=True)"
    with StampingReader(f"exec:{sys.executable} -c {shlex.quote(echo)}", 115200) as reader:
        reader.write(b"hello\n")
        chunks = collect(reader, b"hello")
    assert b"True hello" in b"".join(c.data for c in chunks)


def test_exec_end_of_command_is_a_port_failure() -> None:
    got = b""
    with StampingReader("exec:sh -c 'echo bye'", 115200) as reader, \
            pytest.raises(PortError, match="command ended"):
        for event in reader.events():
            if isinstance(event, Chunk):
                got += event.data
    assert got == b"bye\n"                            # raw pty: bytes as written


def test_exec_command_line_parsing() -> None:
    assert parse_command("exec:BOARD_OUT=/x bash run.sh --serial stdio") == (
        ["bash", "run.sh", "--serial", "stdio"], {"BOARD_OUT": "/x"})
    assert parse_command("exec:sh -c 'a | b'") == (["sh", "-c", "a | b"], {})
    with pytest.raises(ValueError, match="no command"):
        parse_command("exec:A=1")


def test_exec_of_a_missing_program_is_a_clear_error() -> None:
    with pytest.raises(PortError, match="cannot run /nonexistent/prog"):
        open_port("exec:/nonexistent/prog --flag", 115200)


def test_record_from_exec(tmp_path: Path) -> None:
    result = subprocess.run([*BOOTLAB, "record", f"exec:{sys.executable} -c {shlex.quote(PRINTER)}",
                             "--pattern", "tick 1", "--sessions", str(tmp_path)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "tick 1" in result.stdout


@pytest.fixture
def own_board(tmp_path: Path) -> Path:
    """A board folder of the test's own: the built board's files, its own disk, env and run/.

    QEMU write-locks disk.img and --factory-env rewrites env.img, so sharing .lab/board with a
    board that is already running (another test, a developer) would fail or disturb it.
    """
    if not (BOARD_OUT / "board.itb").is_file():
        if os.environ.get("BOOTLAB_REQUIRE_BOARD"):
            pytest.fail(f"the QEMU board is not built in {BOARD_OUT} (scripts/test builds it)")
        pytest.skip(f"the QEMU board is not built in {BOARD_OUT} (run scripts/test as root)")
    out = tmp_path / "board"
    out.mkdir()
    for entry in BOARD_OUT.iterdir():
        if entry.name not in ("disk.img", "env.img", "run"):
            (out / entry.name).symlink_to(entry)
    subprocess.run(["cp", "--sparse=always", str(BOARD_OUT / "disk.img"), str(out)], check=True)
    return out


@pytest.mark.board
def test_exec_the_qemu_board_on_stdio(own_board: Path) -> None:
    url = (f"exec:BOARD_OUT={own_board} bash {LAB / 'run-board.sh'} --serial stdio "
           "--factory-env")
    reader = StampingReader(url, 115200)
    try:
        chunks = collect(reader, b"U-Boot 2023.01", timeout=60)
        qemu = int((own_board / "run" / "qemu.pid").read_text())
    finally:
        reader.close()
    assert b"U-Boot 2023.01" in b"".join(c.data for c in chunks)
    with pytest.raises(ProcessLookupError):  # the board is powered off with the port
        os.kill(qemu, 0)


# -- rfc2217:// ------------------------------------------------------------------------------


class _Connection:
    """What PortManager writes to: the TCP connection, thread-safe."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self.lock:
            self.conn.sendall(data)


class _PtySerial(serial.Serial):
    """A pty has no modem lines (TIOCMGET fails): fixed inputs, DTR and RTS ignored."""

    cts = dsr = True
    ri = cd = False

    def _update_dtr_state(self) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass


class Rfc2217Server:
    """A tiny RFC 2217 server (pyserial's PortManager) bridging one client to a pty."""

    def __init__(self, device: str) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"rfc2217://127.0.0.1:{self.listener.getsockname()[1]}"
        self.serial = _PtySerial(device, timeout=0.05)
        self.conn: socket.socket | None = None
        self.closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.conn, _ = self.listener.accept()
        connection = _Connection(self.conn)
        manager = rfc2217.PortManager(self.serial, connection)  # type: ignore[arg-type]
        threading.Thread(target=self._to_client, args=(connection, manager),
                         daemon=True).start()
        while not self.closed:
            try:
                data = self.conn.recv(4096)
            except OSError:
                return
            if not data:
                return
            self.serial.write(b"".join(manager.filter(data)))

    def _to_client(self, connection: _Connection, manager: rfc2217.PortManager) -> None:
        while not self.closed:
            try:
                data = self.serial.read(self.serial.in_waiting or 1)
                if data:
                    connection.write(b"".join(manager.escape(data)))
            except (OSError, serial.SerialException):
                return

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.conn is not None:
            self.conn.shutdown(socket.SHUT_RDWR)
            self.conn.close()
        self.listener.close()
        time.sleep(0.1)
        self.serial.close()


@pytest.mark.filterwarnings("ignore:set(Daemon|Name)\\(\\) is deprecated:DeprecationWarning")
def test_reader_on_an_rfc2217_port(pty_pair: Pty) -> None:
    """rfc2217:// has no descriptor: the reader's thread blocks in read() instead."""
    server = Rfc2217Server(pty_pair.name)
    try:
        reader = StampingReader(server.url, 115200)
        sent = time.monotonic_ns()
        pty_pair.write(b"U-Boot 2023.01\r\n")
        chunks = collect(reader, b"2023.01\r\n")
        assert b"".join(c.data for c in chunks) == b"U-Boot 2023.01\r\n"
        assert 0 <= stamp_of(chunks, b"U-Boot") - sent < 60_000_000
        reader.write(b"boot\r")
        time.sleep(0.2)
        assert os.read(pty_pair.master, 100) == b"boot\r"
        server.close()
        with pytest.raises(PortError, match="stopped working"):
            for _ in reader.events():
                pass
        reader.close()
    finally:
        server.close()


# -- one port, one user ----------------------------------------------------------------------


def exclusive_flag(fd: int) -> int:
    raw = fcntl.ioctl(fd, TIOCGEXCL, b"\0\0\0\0")
    return int(struct.unpack("i", raw)[0])


def test_two_openers_on_one_pty(pty_pair: Pty, lock_dir: Path) -> None:
    first = open_port(pty_pair.name, 115200)
    lock = lock_dir / lock_name(pty_pair.name)
    assert lock.read_text() == f"{os.getpid():>10}\n"    # HDB UUCP: 10 digits and a newline
    assert exclusive_flag(pty_pair.slave) == 1            # TIOCEXCL
    with pytest.raises(PortError, match="port is in use by") as refused:
        open_port(pty_pair.name, 115200)
    assert f"(pid {os.getpid()})" in str(refused.value) and str(lock) in str(refused.value)
    first.close()
    assert not lock.exists() and exclusive_flag(pty_pair.slave) == 0
    open_port(pty_pair.name, 115200).close()


def test_flock_refuses_without_lock_files_and_names_the_holder(
        pty_pair: Pty, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BOOTLAB_LOCK_DIR", str(tmp_path / "no-such-folder"))
    first = open_port(pty_pair.name, 115200)
    try:
        with pytest.raises(PortError, match="port is in use by") as refused:
            open_port(pty_pair.name, 115200)
    finally:
        first.close()
    assert f"(pid {os.getpid()})" in str(refused.value)


def test_a_stale_lock_is_taken_over(pty_pair: Pty, lock_dir: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    lock = lock_dir / lock_name(pty_pair.name)
    lock.write_text(f"{gone.pid:>10}\n")
    port = open_port(pty_pair.name, 115200)
    assert lock.read_text() == f"{os.getpid():>10}\n"
    port.close()
    assert not lock.exists()


def test_a_lock_held_by_a_live_program_is_refused_and_named(pty_pair: Pty,
                                                            lock_dir: Path) -> None:
    holder = subprocess.Popen(["sleep", "30"])
    comm = Path(f"/proc/{holder.pid}/comm")
    deadline = time.monotonic() + 5
    while comm.read_text().strip() != "sleep" and time.monotonic() < deadline:
        time.sleep(0.01)                                # the name changes as exec() ends
    try:
        lock = lock_dir / lock_name(pty_pair.name)
        lock.write_text(f"{holder.pid:>10}\n")
        with pytest.raises(PortError, match=rf"in use by sleep \(pid {holder.pid}\)"):
            open_port(pty_pair.name, 115200)
        assert lock.read_text() == f"{holder.pid:>10}\n"  # not ours: left alone
    finally:
        holder.kill()
        holder.wait()


def test_lock_names_follow_symlinks_to_the_device(pty_pair: Pty, tmp_path: Path) -> None:
    link = tmp_path / "ttyBOARD"
    link.symlink_to(pty_pair.name)
    assert lock_name(str(link)) == lock_name(pty_pair.name) == \
        "LCK.." + pty_pair.name.removeprefix("/dev/").replace("/", "_")
    assert lock_name("/dev/ttyUSB0") == "LCK..ttyUSB0"


# -- timing warnings -------------------------------------------------------------------------


def fake_timer(root: Path, name: str, ms: int) -> None:
    folder = root / "bus" / "usb-serial" / "devices" / name
    folder.mkdir(parents=True)
    (folder / "latency_timer").write_text(f"{ms}\n")


@pytest.fixture
def sysfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "sys"
    monkeypatch.setenv("BOOTLAB_SYSFS_ROOT", str(root))
    yield root


def test_latency_timer_warning(sysfs: Path) -> None:
    fake_timer(sysfs, "ttyUSB0", 16)
    fake_timer(sysfs, "ttyUSB1", 1)
    warning = latency_warning("/dev/ttyUSB0")
    assert warning is not None
    assert "late by up to 16 ms" in warning
    assert "echo 1 | sudo tee /sys/bus/usb-serial/devices/ttyUSB0/latency_timer" in warning
    assert latency_warning("/dev/ttyUSB1") is None      # already 1 ms
    assert latency_warning("/dev/ttyS0") is None        # not a USB serial adapter
    assert latency_warning("socket://127.0.0.1:5555") is None


def test_record_warns_about_the_latency_timer(pty_pair: Pty, sysfs: Path,
                                              tmp_path: Path) -> None:
    fake_timer(sysfs, os.path.basename(pty_pair.name), 16)
    proc = subprocess.Popen([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path)],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=20)
    assert first.startswith("bootlab: warning: ") and "late by up to 16 ms" in first
