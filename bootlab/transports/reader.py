"""The stamping reader: a thread that only waits, stamps and reads, so stamps stay true.

A console line's time is the time its first byte became readable. A loop that reads and then
frames, matches and writes in the same thread stamps late whenever that work is slow: bytes
that arrive during it are only seen at the next wake (the line after a 1 MiB line came +40 ms
late). Here a daemon thread waits on the port (poll() on its descriptor, or a blocking read
with a timeout for ports without one, such as rfc2217://), takes CLOCK_MONOTONIC the moment it
wakes, reads everything waiting and queues `Chunk(data, t_ns)`; the consumer takes events at
its own pace from `events()`.

Two things can still hold the stamp back while the consumer is busy, and both are dealt with
(bench/bench_stamping.py measures each):

- Python threads share one interpreter lock. A consumer busy in Python code keeps it until
  the interpreter's switch interval forces a handover, 5 ms by default, and the reader's stamp
  waits for it (and so does every return from a system call: the reader makes two per read).
  While any reader runs the switch interval is lowered to 0.1 ms (`sys.setswitchinterval`).
  It only costs anything while two threads both want to run Python code, that is while the
  reader has bytes to handle; measured under an unpaced flood, 0.1 ms against 0.5 ms cut the
  median lag from 2.4 to 0.75 ms without losing throughput.
- The kernel has to run the woken thread. On a busy CPU a normal thread waits for the running
  one's time slice (measured: p99 ~3 ms behind a busy consumer on a 2-CPU machine). Where it
  is allowed (root, CAP_SYS_NICE or an RLIMIT_RTPRIO), the reader thread gets SCHED_FIFO at
  the lowest real-time priority, which runs it at once (p99 0.3 ms); it only ever waits,
  stamps, reads and queues, so it cannot hog a CPU, and SCHED_RESET_ON_FORK keeps anything
  it starts (an exec: command reopened after a gap) a normal process. Where it is not
  allowed the reader silently stays a normal thread (`realtime` says which).

When the port goes away (adapter unplugged, the other end of a pty closed, a TCP peer gone)
and `reconnect` is on, the reader reports `Gap`, reopens the same path or URL (or where
`locate` says the port is now) every 100 ms and reports `Reconnected`; stamps keep the same
clock, so the session's time base is unchanged. Without `reconnect` the failure is raised
from `events()` as PortError, after every chunk read before it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import serial

from bootlab.transports.errors import PortError
from bootlab.transports.execport import PREFIX as EXEC_PREFIX
from bootlab.transports.execport import ExecSerial
from bootlab.transports.line import SerialLine
from bootlab.transports.port import has_descriptor, open_port

FAST_SWITCH_S = 0.0001
"""Interpreter switch interval while a reader runs (the default is 0.005 s)."""
RETRY_S = 0.1
"""How often a lost port is reopened."""
BREAK_S = 0.25
"""How long a BREAK holds the line (Linux's SysRq wants more than a character's time)."""
MAX_QUEUED = 4096
"""Chunks queued for the consumer before the reader waits (and the port's buffer fills)."""
MAX_QUEUED_BYTES = 4 << 20
"""Bytes queued for the consumer before the reader waits: a flood faster than the consumer
then waits in the port (TCP flow control, the pty's writer), not in memory."""


@dataclass(frozen=True)
class Chunk:
    """Bytes read at once; `t_ns` is CLOCK_MONOTONIC when the reader woke for them."""

    data: bytes
    t_ns: int


@dataclass(frozen=True)
class Idle:
    """Nothing arrived for a poll interval (time to flush, check timeouts)."""

    t_ns: int


@dataclass(frozen=True)
class Gap:
    """The port was lost at `t_ns`; the reader is trying to reopen it."""

    t_ns: int
    reason: str


@dataclass(frozen=True)
class Reconnected:
    """The port is back at `t_ns`, after a gap that began at `lost_ns`."""

    t_ns: int
    lost_ns: int


Event = Chunk | Idle | Gap | Reconnected


def default_reconnect(url: str) -> bool:
    """Whether to ride out a lost port by default: yes, except for `exec:` commands."""
    return not url.startswith(EXEC_PREFIX)


class _SwitchInterval:
    """Lowers the interpreter's switch interval while at least one reader runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved = sys.getswitchinterval()

    def acquire(self) -> None:
        with self._lock:
            if self._users == 0:
                self._saved = sys.getswitchinterval()
                sys.setswitchinterval(min(self._saved, FAST_SWITCH_S))
            self._users += 1

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                sys.setswitchinterval(self._saved)


_SWITCH = _SwitchInterval()


def _make_realtime(tid: int | None) -> bool:
    """Give a thread SCHED_FIFO priority 1 if this process may; whether it worked."""
    if tid is None or not hasattr(os, "SCHED_FIFO"):
        return False
    try:
        os.sched_setscheduler(tid, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))
    except OSError:
        return False
    return True


def _why(port: serial.SerialBase, reason: str) -> str:
    """Why a port stopped: an exec: command's exit status says more than the read error."""
    return port.end_reason() if isinstance(port, ExecSerial) else reason


class _Lost(Exception):
    """The port stopped delivering (read error or end of file)."""


class StampingReader:
    """A port read on its own thread: stamped chunks, gaps and reconnections as events."""

    def __init__(self, url: str, baud: int, *, reconnect: bool = False,
                 retry_s: float = RETRY_S, realtime: bool = True,
                 locate: Callable[[], str] | None = None, line: SerialLine | None = None) -> None:
        """Open the port (device path, pyserial URL or exec:) and start reading it.

        Args:
            url: device path, pyserial URL or exec:COMMAND.
            baud: line speed (devices and rfc2217://).
            reconnect: ride out a lost port (Gap, then Reconnected) instead of failing.
            retry_s: how often a lost port is reopened.
            realtime: try to run the reader thread at real-time priority (see above).
            locate: where the port is now, asked at each reopen (a labgrid place's console
                moves to a new port when its exporter restarts ser2net); default `url`.
            line: data bits, parity, stop bits, flow control, modem lines (default 8N1).

        Raises:
            PortError: the port cannot be opened (reconnection only follows a first success).
        """
        self.url = url
        self.baud = baud
        self.reconnect = reconnect
        self.retry_s = retry_s
        self.locate = locate or (lambda: url)
        self.line = line
        self._port: serial.SerialBase | None = open_port(url, baud, line)
        self._port_lock = threading.Lock()
        self._queue: queue.Queue[Event | PortError] = queue.Queue(MAX_QUEUED)
        self._room = threading.Condition()
        self._queued_bytes = 0
        self._stopping = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        _SWITCH.acquire()
        self._thread = threading.Thread(target=self._run, name=f"bootlab reader {url}",
                                        daemon=True)
        self._thread.start()
        self.realtime = realtime and _make_realtime(self._thread.native_id)
        """Whether the reader thread runs at real-time priority."""

    def __enter__(self) -> StampingReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def events(self, stop: Callable[[], bool] = lambda: False,
               poll_s: float = 0.05) -> Iterator[Event]:
        """Events in arrival order until `stop()`; `Idle` after each quiet `poll_s`.

        Raises:
            PortError: the port failed and `reconnect` is off.
        """
        while not stop():
            try:
                item = self._queue.get(timeout=poll_s)
            except queue.Empty:
                yield Idle(time.monotonic_ns())
                continue
            if isinstance(item, PortError):
                raise item
            self._taken(item)
            yield item

    def drain(self) -> Iterator[Event]:
        """The events already queued (read before a stop), without waiting for more."""
        for _ in range(self._queue.qsize()):
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, PortError):
                return
            self._taken(item)
            yield item

    def _taken(self, item: Event) -> None:
        """The consumer took an event: a chunk's bytes make room for the reader."""
        if isinstance(item, Chunk):
            with self._room:
                self._queued_bytes -= len(item.data)
                self._room.notify()

    def write(self, data: bytes) -> None:
        """Send bytes now.

        Raises:
            PortError: the port is gone (during a gap) or the write failed.
        """
        with self._port_lock:
            if self._port is None:
                raise PortError(f"{self.url}: cannot send: the port is gone (reconnecting)")
            try:
                self._port.write(data)
            except (serial.SerialException, OSError) as error:
                raise PortError(f"{self.url}: write failed: {error}") from None

    def send_break(self, seconds: float = BREAK_S) -> None:
        """Send a BREAK (the line held low): SysRq on a Linux console, some bootloaders'
        interrupt.

        Raises:
            PortError: the port is gone, or this kind of port cannot send one.
        """
        with self._port_lock:
            if self._port is None:
                raise PortError(f"{self.url}: cannot send a break: the port is gone")
            try:
                self._port.send_break(seconds)
            except (serial.SerialException, OSError, AttributeError) as error:
                raise PortError(f"{self.url}: cannot send a break: {error}") from None

    def set_line(self, name: str, value: bool | int) -> None:
        """Set `baudrate`, or the `dtr` or `rts` modem line, on the open port.

        Raises:
            PortError: the port is gone, or this kind of port has no such setting.
        """
        with self._port_lock:
            if self._port is None:
                raise PortError(f"{self.url}: cannot set {name}: the port is gone")
            try:
                setattr(self._port, name, value)
            except (serial.SerialException, OSError, ValueError, AttributeError) as error:
                raise PortError(f"{self.url}: cannot set {name}: {error}") from None
        if name == "baudrate":
            self.baud = int(value)

    def close(self) -> None:
        """Stop the thread, close the port (ending an exec: command), release the lock."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=5)
        with self._port_lock:
            port, self._port = self._port, None
        if port is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()
        os.close(self._wake_r)
        os.close(self._wake_w)
        _SWITCH.release()

    def _put(self, item: Event | PortError) -> None:
        if isinstance(item, Chunk):
            with self._room:
                while self._queued_bytes >= MAX_QUEUED_BYTES and not self._stopping.is_set():
                    self._room.wait(0.1)
                self._queued_bytes += len(item.data)
        while not self._stopping.is_set():
            try:
                self._queue.put(item, timeout=0.1)
            except queue.Full:
                continue
            return

    def _run(self) -> None:
        try:
            self._serve()
        except Exception as error:  # a bug must end the session loudly, not silently idle
            self._put(PortError(f"{self.url}: the reader failed: {error!r}"))

    def _serve(self) -> None:
        port = self._port
        while port is not None and not self._stopping.is_set():
            try:
                self._pump(port)
                return
            except (_Lost, serial.SerialException, OSError) as error:
                lost_ns = time.monotonic_ns()
                reason = str(error) or type(error).__name__
            with self._port_lock:
                self._port = None
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()
            if not self.reconnect:
                self._put(PortError(f"{self.url}: the port stopped working: {reason}"))
                return
            self._put(Gap(lost_ns, reason))
            port = self._reopen()
            if port is not None:
                self._put(Reconnected(time.monotonic_ns(), lost_ns))

    def _reopen(self) -> serial.SerialBase | None:
        """Retry opening until it works or the reader is closed."""
        while not self._stopping.wait(self.retry_s):
            try:
                port = open_port(self.locate(), self.baud, self.line)
            except PortError:
                continue
            with self._port_lock:
                if self._stopping.is_set():
                    port.close()
                    return None
                self._port = port
            return port
        return None

    def _pump(self, port: serial.SerialBase) -> None:
        """Read until closed; raises when the port fails."""
        if not has_descriptor(port):
            self._pump_blocking(port)
            return
        fd = port.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        while True:
            ready = dict(poller.poll())
            t_ns = time.monotonic_ns()
            if self._wake_r in ready:
                return
            try:
                data = os.read(fd, 1 << 16)  # not port.read(): it would select() first
            except BlockingIOError:
                continue
            except OSError as error:
                raise _Lost(_why(port, f"read failed: {error.strerror or error}")) from None
            if not data:
                raise _Lost(_why(port, "the port closed (device gone or peer disconnected)"))
            self._put(Chunk(data, t_ns))

    def _pump_blocking(self, port: serial.SerialBase) -> None:
        """Without a descriptor: read() waits for a byte (open_port's timeout), then the rest."""
        while not self._stopping.is_set():
            data = port.read(1)
            t_ns = time.monotonic_ns()
            if not data:
                continue
            waiting = int(getattr(port, "in_waiting", 0))
            if waiting:
                data += port.read(waiting)
            self._put(Chunk(data, t_ns))
