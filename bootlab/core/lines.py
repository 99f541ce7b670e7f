"""Line framing: raw serial chunks in, lines stamped with the host time of their first byte out.

A line ends at "\\n" (so line numbers agree with any text tool). Its bytes are kept exactly,
without the "\\n" but with any "\\r", NUL or escape sequence, because the session on disk and the
exports must be lossless; cleaning for display happens elsewhere (`bootlab.core.text`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MAX_LINE_BYTES = 4 * 1024 * 1024
"""A line longer than this is cut into pieces (`terminated=False`) so a board that never sends
a newline cannot grow memory without bound; the session still holds every byte."""


@dataclass(frozen=True, slots=True)
class Line:
    """One received line."""

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


class LineFramer:
    """Cuts a byte stream into lines, remembering when each line's first byte arrived.

    `feed` is O(len(data)): it searches for newlines with bytes.find, never byte by byte.
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self._pending = bytearray()
        self._pending_t: int | None = None
        self._pending_offset = 0
        self._offset = 0
        self._number = 1

    @property
    def offset(self) -> int:
        """Bytes seen so far."""
        return self._offset

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
        out: list[Line] = []
        start = 0
        size = len(data)
        while start < size:
            if not self._pending:
                self._pending_t = t_ns
                self._pending_offset = self._offset + start
            nl = data.find(b"\n", start)
            if nl < 0:
                self._pending += data[start:]
                if len(self._pending) >= self.max_line:
                    out.append(self._emit(terminated=False))
                break
            self._pending += data[start:nl]
            out.append(self._emit(terminated=True))
            start = nl + 1
        self._offset += size
        return out

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
