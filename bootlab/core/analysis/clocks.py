"""Two clocks, one timeline: host arrival times and kernel printk times placed on one axis.

A recorded line has the host time its first byte arrived; a kernel line also carries the
printk time the kernel stamped it with. Neither is enough alone: printk times are exact relative
to each other but start at an unknown host time, and arrival times are only ever late — by the
read granularity, a USB adapter's latency timer, and most of all the kernel's log buffer: until
the console driver registers, the kernel keeps its messages and then flushes the first half
second of them at once (the console-enable burst).

So, per boot, the kernel clock is fitted to the host clock, `host = offset + kernel`. Arrival can
only be late, so the offset is the smallest `host - kernel` that a few lines agree on; lines
arriving more than `LATE_S` after the fit predicts are late (their host time is unreliable), and
the first run of late lines whose printk times span more than their arrival is the burst. Each
milestone is then placed on the host clock by its arrival time where that is reliable, by the
fit where it is not (`kernel-fit`), or by printk time alone when the log has no host time, with
an uncertainty in milliseconds saying how far off it may be.
"""

from __future__ import annotations

import statistics
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bootlab.core.analysis.phases import Boot, ParsedLine
from bootlab.core.analysis.pipeline import Analysis, parse_line
from bootlab.core.capture.sources import Source

Basis = Literal["host", "kernel-fit", "kernel"]
DEFAULT_BAUD = 115200
"""Assumed when a log does not say at which rate it was read."""
BITS_PER_BYTE = 10
"""A start bit, 8 data bits and a stop bit on the wire (8N1)."""
LATE_S = 0.010
"""A kernel line arriving this much later than the fit predicts is late: more than one
100-byte line at 115200 baud, far less than the kernel's buffered burst."""
SUPPORT = 3
"""Lines that must agree (within LATE_S) on the clock offset: one early outlier cannot set it."""
BURST_MIN_LINES = 3
IDLE_S = 0.002
"""A read this much later than the wire needed for it came after an idle link."""
PRINTK_RESOLUTION_MS = 0.001
"""printk times have microsecond resolution."""


def baud_of(source: Source) -> tuple[int, bool]:
    """The console's baud rate from the session header, else DEFAULT_BAUD (and False)."""
    baud = source.meta.get("baud")
    if isinstance(baud, int) and baud > 0:
        return baud, True
    return DEFAULT_BAUD, False


def latency_ms(source: Source) -> float:
    """The USB adapter's latency timer recorded in the header (`latency_timer_ms`), else 0."""
    value = source.meta.get("latency_timer_ms")
    return float(value) if isinstance(value, int | float) and value > 0 else 0.0


class ReadClock:
    """When the bytes of a stream arrived, as finely as the recording tells.

    A session knows every read (`exact`): a byte arrived at or before the read that returned
    it, after the read before. Other logs with host times know only each line's start.
    """

    def __init__(self, offsets: Sequence[int], times_s: Sequence[float], size: int,
                 baud: int, exact: bool) -> None:
        self.offsets = list(offsets)
        self.times_s = list(times_s)
        self.size = size
        self.baud = baud
        self.exact = exact

    @classmethod
    def of(cls, source: Source) -> ReadClock | None:
        """The clock of a source; None when it has no host time at all."""
        baud, _ = baud_of(source)
        if source.session is not None and source.session.chunks:
            offsets, times = source.session.chunk_offsets()
            return cls(offsets, [t / 1e9 for t in times], len(source.data), baud, True)
        if source.stream is not None and len(source.stream):  # a big session, not held
            return cls(source.stream.stream_offsets, [t / 1e9 for t in source.stream.times_ns],
                       source.stream.stream_size, baud, True)
        if source.line_time is None:
            return None
        starts: list[int] = []
        stamps: list[float] = []
        number, offset = 1, 0
        data = source.data
        while offset < len(data):
            t = source.line_time(number, offset)
            if t is not None:
                starts.append(offset)
                stamps.append(t)
            end = data.find(b"\n", offset)
            offset = len(data) if end < 0 else end + 1
            number += 1
        return cls(starts, stamps, len(data), baud, False) if starts else None

    def _index(self, offset: int) -> int:
        return max(bisect_right(self.offsets, offset) - 1, 0)

    def byte_time(self, offset: int) -> float | None:
        """Time of the read that brought the byte at `offset` (None unless `exact`)."""
        return self.times_s[self._index(offset)] if self.exact and self.times_s else None

    def granularity_ms(self, offset: int) -> float:
        """How much earlier than its stamp the byte at `offset` may have arrived.

        At most the time since the previous read, and at most the time the rest of its read
        took on the wire at the baud rate; one character time when only line starts are known.
        """
        char_ms = BITS_PER_BYTE * 1000.0 / self.baud
        if not self.exact:
            return char_ms
        i = self._index(offset)
        end = self.offsets[i + 1] if i + 1 < len(self.offsets) else self.size
        wire = (end - offset) * char_ms
        if i == 0:
            return wire
        return min(wire, (self.times_s[i] - self.times_s[i - 1]) * 1000.0)

    def after_idle(self, offset: int, data: bytes) -> bool:
        """Whether the byte at `offset` began a read that came after the link had been idle:
        longer since the read before than the wire needs for this read's bytes, plus
        `IDLE_S`, with nothing but line ends before it in the read. Such a byte was sent when
        it was written, not queued behind others (a session's reads only)."""
        if not self.exact:
            return False
        i = self._index(offset)
        if i == 0 or data[self.offsets[i]:offset].strip(b"\r\n"):
            return False
        end = self.offsets[i + 1] if i + 1 < len(self.offsets) else self.size
        wire_s = (end - self.offsets[i]) * BITS_PER_BYTE / self.baud
        return self.times_s[i] - self.times_s[i - 1] > wire_s + IDLE_S

    def peak_rate(self, start: int, end: int, window_s: float = 0.5) -> float | None:
        """Most bytes/s received in any `window_s` between stream offsets `start` and `end`."""
        events = [(self.times_s[i], min(self.offsets[i + 1] if i + 1 < len(self.offsets)
                                        else self.size, end) - self.offsets[i])
                  for i in range(len(self.offsets)) if start <= self.offsets[i] < end]
        if not events:
            return None
        best, total, first = 0, 0, 0
        for t, size in events:
            total += size
            while events[first][0] < t - window_s:
                total -= events[first][1]
                first += 1
            best = max(best, total)
        return best / window_s


def boot_lines(source: Source, analysis: Analysis, boot: Boot,
               keep: Callable[[bytes], bool] | None = None) -> list[ParsedLine]:
    """Every line of one boot, parsed (cleaned text, printk time, host time); with `keep`,
    only the lines whose raw bytes it accepts (the others are not parsed)."""
    data = source.data
    later = [b for b in analysis.boots if b.index > boot.index]
    stop = later[0].first_offset if later else len(data)
    lines: list[ParsedLine] = []
    number, offset = boot.first_line, boot.first_offset
    while offset < stop:
        end = data.find(b"\n", offset, stop)
        raw = data[offset:stop] if end < 0 else data[offset:end]
        if keep is None or keep(raw):
            host = source.line_time(number, offset) if source.line_time else None
            lines.append(parse_line(number, raw, host, offset))
        offset = stop if end < 0 else end + 1
        number += 1
    return lines


@dataclass(frozen=True, slots=True)
class ClockFit:
    """host = offset_s + kernel, fitted on the lines printed live."""

    offset_s: float
    """Host time of printk time zero."""
    uncertainty_ms: float
    """How late live lines typically arrive (90th percentile of their lag), plus the
    adapter's latency timer: how far a time placed by the fit may be off."""
    live: int
    """Kernel lines that arrived on time."""
    late: int
    """Kernel lines that arrived late (their host time is not when they were printed)."""
    worst_ms: float = 0.0
    """How late the latest of them arrived."""


@dataclass(frozen=True, slots=True)
class Burst:
    """Kernel lines buffered before the console was enabled and delivered at once."""

    first_line: int
    last_line: int
    lines: int
    host_span_ms: float
    """How long their arrival took."""
    kernel_span_ms: float
    """Over how long they were printed."""
    delay_ms: float
    """How late the most delayed of them arrived."""


@dataclass(frozen=True, slots=True)
class UnifiedMilestone:
    """A milestone on the unified timeline."""

    id: str
    line: int
    t_s: float
    """Seconds on the host clock (session time), or on the printk clock for basis "kernel"."""
    uncertainty_ms: float
    basis: Basis
    boot: int = 1


@dataclass
class BootTimeline:
    """One boot's lines and milestones on one clock."""

    boot: int
    fit: ClockFit | None
    burst: Burst | None
    clock: ReadClock | None
    latency_ms: float = 0.0
    late: frozenset[int] = frozenset()
    """Numbers of kernel lines whose arrival time is unreliable."""
    kernel_entry_gap: tuple[float, float] | None = None
    """Seconds from `Starting kernel` to printk time zero, and its uncertainty in ms."""
    milestones: list[UnifiedMilestone] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def place(self, line: ParsedLine) -> tuple[float, float, Basis] | None:
        """A line's time on the timeline, its uncertainty (ms) and basis; None if it has none."""
        if line.host_s is None or self.clock is None:
            return None if line.kernel_s is None else \
                (line.kernel_s, PRINTK_RESOLUTION_MS, "kernel")
        if line.kernel_s is not None and self.fit is not None and line.number in self.late:
            return self.fit.offset_s + line.kernel_s, self.fit.uncertainty_ms, "kernel-fit"
        uncertainty = self.clock.granularity_ms(line.offset) + self.latency_ms
        burst = self.burst
        if burst is not None and burst.first_line <= line.number <= burst.last_line:
            uncertainty += burst.delay_ms  # an unstamped line amid the buffered ones
        return line.host_s, uncertainty, "host"

    def time(self, line: ParsedLine) -> float | None:
        """A line's time on the timeline (None if it has none)."""
        placed = self.place(line)
        return None if placed is None else placed[0]


@dataclass
class Timeline:
    """Every boot of a stream on the unified timeline."""

    clock: Literal["host", "kernel"]
    boots: list[BootTimeline]

    @property
    def milestones(self) -> list[UnifiedMilestone]:
        """All boots' placed milestones, in order."""
        return [m for boot in self.boots for m in boot.milestones]


def _offset(diffs: Sequence[float]) -> float:
    """The smallest host - kernel that SUPPORT lines (or all, if fewer) lie just above."""
    ordered = sorted(diffs)
    need = min(SUPPORT, len(ordered))
    for i, d in enumerate(ordered):
        if bisect_right(ordered, d + LATE_S, i) - i >= need:
            return d
    return ordered[0]


def fit_clocks(lines: Sequence[ParsedLine],
               latency: float = 0.0) -> tuple[ClockFit | None, frozenset[int], Burst | None]:
    """Fit the kernel clock to the host clock; find the late lines and the burst."""
    pairs = [(ln.number, ln.host_s, ln.kernel_s) for ln in lines
             if ln.host_s is not None and ln.kernel_s is not None]
    if not pairs:
        return None, frozenset(), None
    offset = _offset([h - k for _, h, k in pairs])
    lags = [h - k - offset for _, h, k in pairs]
    tolerance = LATE_S + latency / 1000.0
    late = [lag > tolerance for lag in lags]
    live = [lag for lag, is_late in zip(lags, late, strict=True) if not is_late]
    spread = statistics.quantiles(live, n=10)[-1] if len(live) > 1 else 0.0
    fit = ClockFit(offset, max(spread, 0.0) * 1000.0 + latency, len(live), sum(late),
                   max(lags) * 1000.0)
    late_lines = frozenset(n for (n, _, _), is_late in zip(pairs, late, strict=True) if is_late)
    return fit, late_lines, _burst(pairs, lags, late)


def _burst(pairs: Sequence[tuple[int, float, float]], lags: Sequence[float],
           late: Sequence[bool]) -> Burst | None:
    """The first run of late lines that arrived faster than they were printed."""
    i = 0
    while i < len(pairs):
        if not late[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(pairs) and late[j + 1]:
            j += 1
        run = pairs[i:j + 1]
        host_span = run[-1][1] - run[0][1]
        kernel_span = run[-1][2] - run[0][2]
        if len(run) >= BURST_MIN_LINES and kernel_span > LATE_S and kernel_span >= 2 * host_span:
            return Burst(run[0][0], run[-1][0], len(run), host_span * 1000.0,
                         kernel_span * 1000.0, max(lags[i:j + 1]) * 1000.0)
        i = j + 1
    return None


def unify_boot(source: Source, boot: Boot, lines: Sequence[ParsedLine],
               clock: ReadClock | None) -> BootTimeline:
    """One boot on the unified timeline."""
    latency = latency_ms(source)
    fit, late, burst = fit_clocks(lines, latency) if clock is not None else (None, frozenset(),
                                                                            None)
    timeline = BootTimeline(boot.index, fit, burst, clock, latency, late)
    by_number = {ln.number: ln for ln in lines}
    for milestone in boot.on_console().milestones:
        line = by_number.get(milestone.line)
        placed = timeline.place(line) if line is not None else None
        if placed is not None:
            timeline.milestones.append(UnifiedMilestone(milestone.id, milestone.line, *placed,
                                                        boot=boot.index))
    started = boot.reached("starting_kernel")
    if fit is not None and started is not None and started.host_s is not None \
            and clock is not None and started.line in by_number:
        gap = fit.offset_s - started.host_s
        uncertainty = fit.uncertainty_ms + clock.granularity_ms(by_number[started.line].offset)
        if gap * 1000.0 >= -uncertainty:
            timeline.kernel_entry_gap = (gap, uncertainty)
        else:
            timeline.notes.append(
                f"printk time zero falls {-gap:.3f} s before `Starting kernel`: this kernel's "
                "clock does not start at kernel entry (a timer counting from power-on)")
    backed_up = fit.late - (burst.lines if burst else 0) if fit else 0
    if fit is not None and backed_up > 0:
        timeline.notes.append(
            f"{backed_up} kernel lines arrived more than {LATE_S * 1000:.0f} ms after they were "
            f"printed (up to {fit.worst_ms:.0f} ms): output queued behind the console; placed "
            "by their printk times")
    if burst is not None:
        timeline.notes.append(
            f"lines {burst.first_line}-{burst.last_line}: {burst.lines} kernel lines printed "
            f"over {burst.kernel_span_ms:.0f} ms arrived within {burst.host_span_ms:.0f} ms, up "
            f"to {burst.delay_ms:.0f} ms late (the log buffered until the console was enabled); "
            "placed by their printk times")
    return timeline


def unify(analysis: Analysis, source: Source) -> Timeline:
    """Every boot of an analysed source on the unified timeline."""
    clock = ReadClock.of(source)
    boots = [unify_boot(source, boot, boot_lines(source, analysis, boot), clock)
             for boot in analysis.boots]
    return Timeline("host" if clock is not None else "kernel", boots)
