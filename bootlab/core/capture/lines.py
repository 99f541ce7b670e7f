"""Line framing: raw serial chunks in, lines stamped with the host time of their first byte out.

A line ends at "\\n" (so line numbers agree with any text tool). Its bytes are kept exactly,
without the "\\n" but with any "\\r", NUL or escape sequence, because the session on disk and the
exports must be lossless; cleaning for display happens elsewhere (`capture.text`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

SCROLLBACK_LINES = 100_000
"""Lines a console view keeps by default (the session file keeps every one); a replay's seek
shows at most this many."""
MAX_LINE_BYTES = 4 * 1024 * 1024
"""A line longer than this is cut into pieces (`terminated=False`) so a board that never sends
a newline cannot grow memory without bound; the session still holds every byte."""


@dataclass(slots=True, unsafe_hash=True)
class Line:
    """One received line; never changed once made (`head` and `replace` make new ones).

    Not a frozen dataclass: a frozen one sets each field through object.__setattr__ and takes
    three times as long to make, and the app makes one per line, 50,000 a second in a flood.
    It hashes and compares by value all the same.
    """

    number: int
    """1-based line number in the stream, counted on "\\n"."""
    raw: bytes
    """The exact bytes, without the terminating "\\n"."""
    t_ns: int | None
    """Host time of the first byte, ns since the session start (None: no host time known)."""
    offset: int = 0
    """Byte offset of the first byte in the stream."""
    terminated: bool = True
    """False for a line still being received, or one cut at MAX_LINE_BYTES."""

    @property
    def host_s(self) -> float | None:
        """Host time of the first byte in seconds since the session start."""
        return None if self.t_ns is None else self.t_ns / 1e9

    def head(self, size: int) -> Line:
        """The line with at most its first `size` bytes (what a display keeps of a long line;
        the session has them all)."""
        return self if len(self.raw) <= size else replace(self, raw=self.raw[:size])


@dataclass(frozen=True, slots=True)
class LineBlock:
    """The lines one read completed, kept as one bytes object.

    Every line but the first starts in the read, so all of them share its time; only the first
    may have begun earlier. Framing a read is then a few C calls whatever its line count, and
    `Line` objects are made only for the lines someone looks at (`lines`, `line`).
    """

    raw: bytes
    """The completed lines, each with its b"\\n" (b"" when the read completed none)."""
    count: int
    """How many lines `raw` holds."""
    number: int
    """The first line's number."""
    offset: int
    """Stream offset of raw[0]."""
    first_t_ns: int | None
    """The first line's time (its first byte may have come in an earlier read)."""
    t_ns: int | None
    """Every other line's time: when the read that holds their first bytes returned."""
    tail: Line | None = None
    """An unterminated line after them: one cut at the framer's max_line, or the stream's last."""

    def line(self, start: int, number: int) -> Line:
        """The line starting at raw[start] (a line start), which is line `number`."""
        end = self.raw.index(b"\n", start)
        return Line(number, self.raw[start:end], self.first_t_ns if start == 0 else self.t_ns,
                    self.offset + start)

    def lines(self) -> list[Line]:
        """Every line, in order (the tail last)."""
        out: list[Line] = []
        if self.raw:
            parts = self.raw.split(b"\n")
            parts.pop()  # raw ends with b"\n": nothing after it
            number, offset, t_ns = self.number, self.offset, self.first_t_ns
            for part in parts:
                out.append(Line(number, part, t_ns, offset))
                number += 1
                offset += len(part) + 1
                t_ns = self.t_ns
        if self.tail is not None:
            out.append(self.tail)
        return out


class LineFramer:
    """Cuts a byte stream into lines, remembering when each line's first byte arrived.

    `feed_block` costs a few C calls per read (bytes.rfind, count, one copy), never a Python
    step per line or byte.
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES, number: int = 1, offset: int = 0) -> None:
        """`number` and `offset`: of the first line fed, for a framer started at a line
        start in the middle of a stream (a replay showing a moment from its index)."""
        self.max_line = max_line
        self._pending = bytearray()
        self._pending_t: int | None = None
        self._pending_offset = offset
        self._offset = offset
        self._number = number

    @property
    def offset(self) -> int:
        """Bytes seen so far."""
        return self._offset

    @property
    def number(self) -> int:
        """The number of the line being received (or of the next one)."""
        return self._number

    @property
    def pending_size(self) -> int:
        """Bytes of the line being received (0 between lines); cheap, no copy."""
        return len(self._pending)

    @property
    def pending_offset(self) -> int:
        """Stream offset where the line being received starts (the next byte's, if none)."""
        return self._pending_offset if self._pending else self._offset

    @property
    def partial(self) -> Line | None:
        """The line being received (no newline yet), e.g. a `login: ` or `=> ` prompt."""
        if not self._pending:
            return None
        return Line(self._number, bytes(self._pending), self._pending_t, self._pending_offset,
                    False)

    def feed(self, data: bytes, t_ns: int | None) -> list[Line]:
        """Add bytes that arrived at `t_ns`; return the lines they complete.

        Args:
            data: the bytes of one read.
            t_ns: when the read returned (ns since the session start), or None.

        Returns:
            The completed lines, in order.
        """
        return self.feed_block(data, t_ns).lines()

    def feed_block(self, data: bytes, t_ns: int | None) -> LineBlock:
        """Add bytes that arrived at `t_ns`; return the lines they complete, as one block."""
        pending = self._pending
        number = self._number
        first_t = self._pending_t if pending else t_ns
        offset = self._pending_offset if pending else self._offset
        last = data.rfind(b"\n")
        raw = b""
        if last >= 0:
            head = data if last + 1 == len(data) else data[:last + 1]
            raw = bytes(pending) + head if pending else head
            self._number += raw.count(b"\n")
            pending.clear()
        if last + 1 < len(data):
            if not pending:
                self._pending_t = t_ns
                self._pending_offset = self._offset + last + 1
            pending += data[last + 1:]
        elif not pending:
            self._pending_t = None
        self._offset += len(data)
        tail = self._emit(terminated=False) if len(pending) >= self.max_line else None
        return LineBlock(raw, self._number - number, number, offset, first_t, t_ns, tail)

    def flush(self) -> Line | None:
        """End of stream: return the unterminated last line, if any."""
        if not self._pending:
            return None
        return self._emit(terminated=False)

    def _emit(self, terminated: bool) -> Line:
        line = Line(self._number, bytes(self._pending), self._pending_t, self._pending_offset,
                    terminated)
        self._pending.clear()
        self._pending_t = None
        if terminated:
            self._number += 1
        return line
