"""The console's scrollback: the last lines received, packed into a few large blocks.

A `Line` per row would be 100,000 small objects for the garbage collector to walk (each full
collection took ~40 ms under a flood) and for the allocator to fragment as old lines are freed
and new ones made (the app's memory grew by megabytes after its line cap). Here lines are
appended to blocks of BLOCK_LINES: a mapping of their bytes and arrays of their ends, times,
numbers and offsets. Pruning drops whole blocks, so memory is bounded by the cap plus one block,
and `Line` objects are made only for rows someone looks at.
"""

from __future__ import annotations

import mmap
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import overload

from bootlab.core.capture.lines import Line

BLOCK_LINES = 1024
"""Lines per block: ~100 KB of a typical console's text, a hundred blocks at the cap."""
BLOCK_BYTES = 256 * 1024
"""Bytes a block's mapping starts with (reserved, not used: only pages written count); one of
longer lines moves to a larger mapping."""
_ZEROS = bytes(8 * BLOCK_LINES)
NO_TIME = -(1 << 63)
"""Stored for a line without host time (`Line.t_ns` None)."""


class _Block:
    """Up to BLOCK_LINES lines: their bytes end to end in an anonymous mapping of their own,
    their ends, times, numbers and offsets in arrays made at full size.

    Nothing of a block grows by reallocation, and its bytes are not on the heap: a dropped
    block's pages go back to the system at once, where freed heap chunks of every size (what
    appending to a bytearray left) fragmented the heap and kept the app's memory growing for
    seconds after its line cap. Only the pages written count: a block of short lines costs
    what they hold, not BLOCK_BYTES.
    """

    __slots__ = ("count", "cut", "data", "ends", "numbers", "offsets", "times")

    def __init__(self) -> None:
        self.data = _mapping(BLOCK_BYTES)
        self.count = 0
        """Lines held."""
        self.ends = array("q", _ZEROS)
        self.times = array("q", _ZEROS)
        self.numbers = array("q", _ZEROS)
        self.offsets = array("q", _ZEROS)
        self.cut = bytearray(BLOCK_LINES)
        """1 for a line that was not terminated (cut at the framer's maximum)."""

    def add(self, line: Line) -> None:
        raw, index = line.raw, self.count
        start = self._start(index)
        end = start + len(raw)
        if end > len(self.data):
            self._grow(end)
        self.data[start:end] = raw
        self.ends[index] = end
        self.times[index] = NO_TIME if line.t_ns is None else line.t_ns
        self.numbers[index] = line.number
        self.offsets[index] = line.offset
        self.cut[index] = not line.terminated
        self.count = index + 1

    def _grow(self, needed: int) -> None:
        """A new mapping twice as large (or as large as needed), the bytes copied (long lines:
        `mmap.resize` of an anonymous mapping is unsafe before Python 3.13)."""
        used = self._start(self.count)
        bigger = _mapping(max(needed, 2 * len(self.data)))
        bigger[:used] = self.data[:used]
        self.data.close()
        self.data = bigger

    def _start(self, index: int) -> int:
        """Where line `index`'s bytes start (the end of those before it)."""
        return self.ends[index - 1] if index else 0

    def raw(self, index: int) -> bytes:
        return self.data[self._start(index):self.ends[index]]

    def line(self, index: int) -> Line:
        t_ns = self.times[index]
        return Line(self.numbers[index], self.raw(index), None if t_ns == NO_TIME else t_ns,
                    self.offsets[index], not self.cut[index])


def _mapping(size: int) -> mmap.mmap:
    """A private anonymous mapping of at least `size` bytes (whole pages)."""
    return mmap.mmap(-1, -(-size // mmap.PAGESIZE) * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE)


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
        block = blocks[-1] if blocks else None
        for line in lines:
            if block is None or block.count == BLOCK_LINES:
                block = _Block()
                blocks.append(block)
            block.add(line)
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
            last = blocks[mid]
            if last.numbers[last.count - 1] < number:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(blocks):
            return self._count
        start = self._first if lo == 0 else 0
        at = bisect_left(blocks[lo].numbers, number, start, blocks[lo].count)
        return lo * BLOCK_LINES + at - self._first

    def since(self, number: int) -> list[Line]:
        """The lines from stream line `number` on."""
        return self[self.index_of(number):]
