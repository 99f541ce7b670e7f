"""An index of a session file's received chunks, so a long recording is read a piece at a time.

An hour of a flood is hundreds of megabytes; loading it whole takes seconds and several times
its size in memory. The index says, for every `rx` record, where it is in the file, when it was
read, where its bytes start in the received stream and how many lines came before them. With
it a replay starts at once and jumps anywhere by reading only the records it needs, and an
analysis streams the file in blocks.

It is built by one pass over the file (the session loader's, so the header, meta records and
notices are exactly a loaded session's) and, for a big session, kept beside it as
`NAME.jsonl.idx`; the session writer writes it itself when it closes a big session
(`write_index`), so a recording opens at once the first time too. That file is only a cache:
it is used while the session's size and modification time are those it was built from,
rebuilt when they change or when it cannot be read, and the session file itself is never
changed. It is a JSON header line, then the four columns as native 64-bit integers (reading
them back is one copy, not a parse).
"""

from __future__ import annotations

import contextlib
import json
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from bootlab.core.capture.session import CACHE_BYTES, INDEX_PART, SessionError, load_session
from bootlab.core.files.atomic import write_atomic

INDEX_FORMAT = "bootlab-session-index"
INDEX_VERSION = 2
INDEX_SUFFIX = ".idx"
COLUMNS = ("file_offsets", "times_ns", "stream_offsets", "lines_before")
"""The index's columns, in the order of a noted record's values (`session._IndexLog`)."""
_BLOCK = 8 << 20
"""Stream bytes an analysis reads at a time."""


def index_path(path: Path) -> Path:
    """Where the index of session `path` is kept."""
    return path.with_name(path.name + INDEX_SUFFIX)


@dataclass
class SessionIndex:
    """Where each received chunk of a session is (see the module docstring)."""

    path: Path
    meta: dict[str, Any]
    """The header with the meta records merged, as a loaded session's."""
    notices: list[str]
    """What the loader worked around, as a loaded session's."""
    file_offsets: list[int] = field(default_factory=list)
    times_ns: list[int] = field(default_factory=list)
    stream_offsets: list[int] = field(default_factory=list)
    lines_before: list[int] = field(default_factory=list)
    """Newlines in the stream before each chunk's first byte."""
    stream_size: int = 0
    """Bytes in the received stream (cut at a split)."""
    size: int = 0
    mtime_ns: int = 0
    """The session file's size and modification time when it was indexed."""

    def __len__(self) -> int:
        return len(self.file_offsets)

    def at_time(self, t_ns: int) -> int:
        """How many chunks were read at or before `t_ns`."""
        return bisect_right(self.times_ns, t_ns)

    def read(self, start: int, stop: int) -> list[tuple[int, bytes]]:
        """Chunks `start` to `stop` (exclusive): (t_ns, bytes), read from the file."""
        stop = min(stop, len(self))
        if start >= stop:
            return []
        first = self.file_offsets[start]
        try:
            with self.path.open("rb") as handle:
                handle.seek(first)
                text = handle.read(self.file_offsets[stop] - first if stop < len(self) else -1)
        except OSError as error:
            raise SessionError(f"{self.path}: cannot read: {error.strerror or error}") from None
        chunks: list[tuple[int, bytes]] = []
        wanted = iter(self.file_offsets[start:stop])
        next_offset = next(wanted)
        position = first
        for line in text.split(b"\n"):
            if position == next_offset:
                chunks.append(self._chunk(start + len(chunks), line))
                next_offset = next(wanted, -1)
            position += len(line) + 1
        if len(chunks) < stop - start:
            raise SessionError(f"{self.path}: changed since it was indexed; open it again")
        return chunks

    def _chunk(self, index: int, line: bytes) -> tuple[int, bytes]:
        """The chunk the record `line` holds (its bytes cut at the end of the stream: a split
        may end it inside one)."""
        try:
            record = json.loads(line)
            t_ns, data = record["t"], record["rx"].encode("latin-1")
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeEncodeError):
            raise SessionError(f"{self.path}: changed since it was indexed (no received "
                               "record where the index has one); open it again") from None
        room = self.stream_size - self.stream_offsets[index]
        return t_ns, data if len(data) <= room else data[:room]

    def blocks(self, size: int = _BLOCK) -> Iterator[bytes]:
        """The received stream, in consecutive blocks of about `size` bytes."""
        start = 0
        while start < len(self):
            stop = bisect_right(self.stream_offsets, self.stream_offsets[start] + size,
                                lo=start + 1)
            yield b"".join(data for _, data in self.read(start, stop))
            start = stop

    def to_bytes(self) -> bytes:
        """The index as its file holds it."""
        head = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "size": self.size,
                "mtime_ns": self.mtime_ns, "byteorder": sys.byteorder, "count": len(self),
                "meta": self.meta, "notices": self.notices, "stream_size": self.stream_size}
        return (json.dumps(head, separators=(",", ":")).encode() + b"\n"
                + b"".join(array("q", getattr(self, name)).tobytes() for name in COLUMNS))


class IndexedChunks(Sequence[tuple[int, bytes]]):
    """A session's chunks as a sequence, read from the file when asked for, a run at a time
    (playback asks for them in order)."""

    RUN = 256
    """Chunks read together."""

    def __init__(self, index: SessionIndex) -> None:
        self.indexed = index
        self._start = 0
        self._run: list[tuple[int, bytes]] = []

    def __len__(self) -> int:
        return len(self.indexed)

    @overload
    def __getitem__(self, item: int) -> tuple[int, bytes]: ...

    @overload
    def __getitem__(self, item: slice) -> Sequence[tuple[int, bytes]]: ...

    def __getitem__(self, item: int | slice) -> tuple[int, bytes] | Sequence[tuple[int, bytes]]:
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(len(self)))]
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError(item)
        if not self._start <= item < self._start + len(self._run):
            self._start = item
            self._run = self.indexed.read(item, item + self.RUN)
        return self._run[item - self._start]


def session_index(path: Path, cache: bool | None = None) -> SessionIndex:
    """The index of session `path`: the one kept beside it when it is still the file's, else
    one built now (and kept beside it when the file is big, or when `cache` says so).

    Raises:
        SessionError: the file cannot be read or is not a session.
    """
    try:
        info = path.stat()
    except OSError:
        info = None
    if info is not None:
        kept = _load(index_path(path), path, info.st_size, info.st_mtime_ns)
        if kept is not None:
            return kept
    index = build_index(path)
    if cache if cache is not None else index.size >= CACHE_BYTES:
        with contextlib.suppress(OSError):  # a folder we may not write: it is only a cache
            write_atomic(index_path(path), index.to_bytes())
            # what a writer killed before it closed the session had noted: not needed now
            path.with_name(path.name + INDEX_PART).unlink(missing_ok=True)
    return index


def write_index(path: Path, meta: dict[str, Any], noted: array[int],
                split: int | None) -> None:
    """Keep beside a session just written its index, from what its writer noted of each
    received record (`COLUMNS` values, one record after another), its meta (the header with
    the meta records merged) and its split, as `build_index` would build it.

    Raises:
        OSError: the session cannot be seen or the index cannot be written.
    """
    offsets, times, starts, lines = (noted[i::len(COLUMNS)].tolist()
                                     for i in range(len(COLUMNS)))
    total = _stream_end(path, offsets[-1], starts[-1]) if offsets else 0
    size = total if split is None else min(total, split)
    kept = bisect_right(starts, size - 1) if split is not None else len(offsets)
    info = path.stat()
    index = SessionIndex(path, meta, [], offsets[:kept], times[:kept], starts[:kept],
                         lines[:kept], size, info.st_size, info.st_mtime_ns)
    write_atomic(index_path(path), index.to_bytes())


def _stream_end(path: Path, file_offset: int, stream_offset: int) -> int:
    """Where the received stream ends: the last rx record's start plus its length."""
    with path.open("rb") as handle:
        handle.seek(file_offset)
        record = json.loads(handle.readline())
    return stream_offset + len(record["rx"])


def build_index(path: Path) -> SessionIndex:
    """Index a session file by reading it once (in blocks; nothing of it is kept).

    Raises:
        SessionError: the file cannot be read or is not a session.
    """
    offsets: list[int] = []
    times: list[int] = []
    starts: list[int] = []
    lines: list[int] = []
    position = newlines = 0

    def add(offset: int, t_ns: int, text: str) -> None:
        nonlocal position, newlines
        offsets.append(offset)
        times.append(t_ns)
        starts.append(position)
        lines.append(newlines)
        position += len(text)
        newlines += text.count("\n")

    info = path.stat() if path.exists() else None
    session = load_session(path, on_rx=add)
    size = position if session.split is None else min(position, session.split)
    kept = bisect_right(starts, size - 1) if session.split is not None else len(offsets)
    index = SessionIndex(path, session.meta, session.notices, offsets[:kept], times[:kept],
                         starts[:kept], lines[:kept], size)
    if info is not None:
        index.size, index.mtime_ns = info.st_size, info.st_mtime_ns
    return index


def _load(where: Path, path: Path, size: int, mtime_ns: int) -> SessionIndex | None:
    """The index kept at `where`, if it is one of the session as it is now."""
    try:
        blob = where.read_bytes()
        head, _, body = blob.partition(b"\n")
        data = json.loads(head)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT \
            or data.get("version") != INDEX_VERSION or data.get("size") != size \
            or data.get("mtime_ns") != mtime_ns or data.get("byteorder") != sys.byteorder:
        return None
    try:
        count = int(data["count"])
        width = array("q").itemsize * count
        if len(body) != width * len(COLUMNS) or not isinstance(data["meta"], dict):
            return None
        offsets, times, starts, lines = (_column(body[i * width:(i + 1) * width])
                                         for i in range(len(COLUMNS)))
        return SessionIndex(path, data["meta"], [str(n) for n in data["notices"]], offsets,
                            times, starts, lines, int(data["stream_size"]), size, mtime_ns)
    except (KeyError, TypeError, ValueError):
        return None


def _column(data: bytes) -> list[int]:
    column = array("q")
    column.frombytes(data)
    return column.tolist()
