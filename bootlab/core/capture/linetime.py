"""A line's host time and its number in the file: how each kind of boot log says them.

A session knows when every read arrived (a line's time is its first byte's read); a grabserial
log stamps each line; other logs have no host time at all. A grabserial log also holds lines
the stream does not (grabserial's own messages), so a stream line's number in the file can
differ from its number in the stream.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

LineTime = Callable[[int, int], float | None]
"""(line number, byte offset of its first byte) -> host time in seconds, or None."""
LineNumber = Callable[[int], int]
"""A stream's line number -> the line's number in the file it was read from."""


def chunk_line_time(offsets: Sequence[int], times_ns: Sequence[int]) -> LineTime:
    """A `LineTime` for a stream recorded as chunks: a line's time is its first byte's chunk's.

    Args:
        offsets: stream offset of each chunk's first byte, ascending.
        times_ns: when each chunk was read, ns since the session start.
    """

    def line_time(_number: int, offset: int) -> float | None:
        index = bisect_right(offsets, offset) - 1
        return times_ns[max(index, 0)] / 1e9 if times_ns else None

    return line_time


def list_line_time(times: list[float]) -> LineTime:
    """A `LineTime` reading line N's host time from `times[N - 1]`."""

    def line_time(number: int, _offset: int) -> float | None:
        return times[number - 1] if 1 <= number <= len(times) else None

    return line_time
