"""The console UART's transmit side, to cost console output: a boot's own lines replayed through
its transmit buffer (`Uart`, `console_stall`).

The kernel loses only the time it waits for room in the buffer, which a deep buffer (an
emulated UART's pipe) makes much less than the bytes' time on the wire, the upper bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from bootlab.core.analysis.clocks import BITS_PER_BYTE

Refill = Literal["room", "empty"]
REFILLS: tuple[Refill, ...] = ("room", "empty")


@dataclass(frozen=True)
class Uart:
    """A console UART's transmit side: how much output it takes before the writer waits."""

    fifo: int = 0
    """Bytes its transmit buffer holds. 0 fits a hardware UART under Linux: the 8250, PL011 and
    i.MX console drivers wait for the transmitter to empty after every message, so a 16- or
    32-byte FIFO holds nothing from one message to the next."""
    refill: Refill = "room"
    """"room": a byte goes in as soon as one has left (a FIFO); "empty": once full, the buffer
    takes nothing until it has drained (a one-page pipe, as behind the QEMU board's
    uart-proxy.py: `Uart(4096, "empty")`)."""

    def describe(self) -> str:
        """The buffer in words."""
        if self.fifo <= 0:
            return ("no transmit buffer between messages (Linux's 8250, PL011 and i.MX consoles "
                    "wait for the transmitter to empty after each one; --uart-fifo for another)")
        how = "a byte goes in as one leaves" if self.refill == "room" else \
            "refilled only once empty"
        return f"a {self.fifo}-byte transmit buffer, {how}"


HARDWARE_UART = Uart()
"""A hardware UART under Linux: no transmit buffer from one message to the next."""


@dataclass(frozen=True)
class ConsoleWrite:
    """Bytes written to the console at one time."""

    t_s: float
    size: int
    kernel: bool
    """A kernel message (`quiet` keeps it off the console), not user-space output."""


def _put(queue: float, used: int, size: int, uart: Uart, rate: float
         ) -> tuple[float, int, float]:
    """Queue length and bytes put in since empty after writing `size` bytes, and the wait."""
    if uart.refill == "room" or uart.fifo <= 0:
        wait = max(0.0, queue + size - uart.fifo) / rate
        return queue + size - wait * rate, used + size, wait
    wait = 0.0
    while True:
        take = min(size, max(uart.fifo - used, 0))
        queue, used, size = queue + take, used + take, size - take
        if not size:
            return queue, used, wait
        wait, queue, used = wait + queue / rate, 0.0, 0


def console_stall(writes: Iterable[ConsoleWrite], baud: int, uart: Uart,
                  stalled: bool) -> float:
    """Seconds the kernel waits for the console while writing its messages.

    The writes enter the transmit buffer in order, each at its time or once the previous one
    is done; the buffer drains at baud/10 bytes/s. A kernel message waits while the buffer is
    full; user-space output fills it but is not waited for (the tty layer buffers it).
    `stalled`: the times were recorded behind this UART, so they include the waits already;
    otherwise every wait delays all later writes.
    """
    rate = baud / BITS_PER_BYTE
    queue, used, total = 0.0, 0, 0.0
    done: float | None = None
    for write in writes:
        t = write.t_s if stalled else write.t_s + total
        if done is not None:
            t = max(t, done)
            queue -= (t - done) * rate
            if queue <= 0:
                queue, used = 0.0, 0
        if write.kernel:
            queue, used, wait = _put(queue, used, write.size, uart, rate)
            total += wait
            t += wait
        else:
            queue, used = queue + write.size, used + write.size
        done = t
    return total
