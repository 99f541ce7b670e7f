"""The console's scrollback: the last lines received, packed into a few large blocks.

A `Line` per row would be 100,000 small objects for the garbage collector to walk (each full
collection took ~40 ms under a flood) and for the allocator to fragment as old lines are freed
and new ones made (the app's memory grew by megabytes after its line cap). Here lines are
appended to blocks of BLOCK_LINES: one bytearray of their bytes and arrays of their ends, times,
numbers and offsets. Pruning drops whole blocks, so memory is bounded by the cap plus one block,
and `Line` objects are made only for rows someone looks at.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import overload

from bootlab.core.capture.lines import Line

SCROLLBACK_LINES = 100_000
"""Lines the console keeps by default (the session keeps every one)."""
BLOCK_LINES = 1024
"""Lines per block: ~100 KB of a typical console's text, a hundred blocks at the cap."""
NO_TIME = -(1 << 63)
"""Stored for a line without host time (`Line.t_ns` None)."""


class _Block:
    """Up to BLOCK_LINES lines, their bytes end to end."""

    __slots__ = ("cut", "data", "ends", "numbers", "offsets", "times")

    def __init__(self) -> None:
        self.data = bytearray()
        self.ends = array("q")
        self.times = array("q")
        self.numbers = array("q")
        self.offsets = array("q")
        self.cut = bytearray()
        """1 for a line that was not terminated (cut at the framer's maximum)."""

    def add(self, line: Line) -> None:
        self.data += line.raw
        self.ends.append(len(self.data))
        self.times.append(NO_TIME if line.t_ns is None else line.t_ns)
        self.numbers.append(line.number)
        self.offsets.append(line.offset)
        self.cut.append(not line.terminated)

    def raw(self, index: int) -> bytes:
        start = self.ends[index - 1] if index else 0
        return bytes(self.data[start:self.ends[index]])

    def line(self, index: int) -> Line:
        t_ns = self.times[index]
        return Line(self.numbers[index], self.raw(index), None if t_ns == NO_TIME else t_ns,
                    self.offsets[index], not self.cut[index])


class LineStore(Sequence[Line]):
    """The lines held, oldest first; `Line` objects are made on access."""

    def __init__(self) -> None:
        self._blocks: list[_Block] = []
        self._first = 0
        """Index in the first block of the oldest line held."""
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Line: ...

    @overload
    def __getitem__(self, index: slice) -> list[Line]: ...

    def __getitem__(self, index: int | slice) -> Line | list[Line]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        block, at = self._locate(index)
        return block.line(at)

    def __iter__(self) -> Iterator[Line]:
        for i in range(self._count):
            yield self[i]

    def _locate(self, index: int) -> tuple[_Block, int]:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("line index out of range")
        at = self._first + index
        return self._blocks[at // BLOCK_LINES], at % BLOCK_LINES

    def raw(self, index: int) -> bytes:
        """The bytes of line `index` (no `Line` made)."""
        block, at = self._locate(index)
        return block.raw(at)

    def t_ns(self, index: int) -> int | None:
        """The host time of line `index`."""
        block, at = self._locate(index)
        t_ns = block.times[at]
        return None if t_ns == NO_TIME else t_ns

    def extend(self, lines: Sequence[Line]) -> None:
        """Append lines (their numbers ascending, after those held)."""
        blocks = self._blocks
        used = (self._first + self._count) % BLOCK_LINES
        block = blocks[-1] if blocks and used else None
        for line in lines:
            if block is None or used == BLOCK_LINES:
                block, used = _Block(), 0
                blocks.append(block)
            block.add(line)
            used += 1
        self._count += len(lines)

    def drop(self, count: int) -> None:
        """Forget the `count` oldest lines; a block goes once none of its lines is held."""
        count = max(0, min(count, self._count))
        self._count -= count
        self._first += count
        gone = self._first // BLOCK_LINES
        if gone:
            del self._blocks[:gone]
            self._first -= gone * BLOCK_LINES
        if not self._count:
            self.clear()

    def clear(self) -> None:
        """Forget every line."""
        self._blocks.clear()
        self._first = self._count = 0

    def index_of(self, number: int) -> int:
        """Where line `number` is or would go (bisect on the stored numbers)."""
        blocks = self._blocks
        lo, hi = 0, len(blocks)
        while lo < hi:  # the first block whose last number is >= number
            mid = (lo + hi) // 2
            if blocks[mid].numbers[-1] < number:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(blocks):
            return self._count
        start = self._first if lo == 0 else 0
        at = bisect_left(blocks[lo].numbers, number, start)
        return lo * BLOCK_LINES + at - self._first

    def since(self, number: int) -> list[Line]:
        """The lines from stream line `number` on."""
        return self[self.index_of(number):]
