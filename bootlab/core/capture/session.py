"""Session files: one boot, every byte received and sent with its host time, append-only.

Format (version 1), JSON Lines, ASCII only:

- line 1, the header: `{"format": "bootlab-session", "version": 1, "started": ISO wall time,
  "started_epoch": s, "label", "board", "port", "baud", "profile", "settings": {...},
  "bootlab": version, "host": name, ...}`
- then one record per line, `t` in ns since the start (CLOCK_MONOTONIC):
  - `{"t": ns, "rx": "<bytes as latin-1>"}`: bytes received in one read (JSON escapes keep every
    byte value exact, so the record is lossless);
  - `{"t": ns, "before": "<bytes as latin-1>"}`: bytes received, stamped before the boot's time
    zero (bootlab powered the board on, reset it or typed its boot command later): the
    previous boot's output still arriving, kept apart, never part of this boot's stream;
  - `{"t": ns, "tx": "<bytes as latin-1>"}`: bytes sent;
  - `{"t": ns, "tx_redacted": n}`: n bytes typed at a password prompt, not stored;
  - `{"t": ns, "event": "...", ...}`: gap, reconnect, note, end;
  - `{"t": ns, "meta": {...}}`: metadata learnt while recording (merged into the header);
  - `{"t": ns, "split": offset, "next": "file"}`: the boot ended at this byte offset of the
    received stream; the bytes after it also start the next boot's file.

Records are buffered and written at least every `FLUSH_INTERVAL_S`, so a crash or kill -9
loses at most that much. A loader reads whatever is intact and says what it skipped.

A session that grows to `CACHE_BYTES` gets its index (`session_index`) from the writer when it
is closed: where each received record went is noted as it is written (in memory up to that
size, then appended to `NAME.jsonl.idx.part`, so memory stays flat), and the index is written
beside the session, so a long recording opens at once the first time too.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from bootlab import __version__

FORMAT = "bootlab-session"
VERSION = 1
CACHE_BYTES = 16 << 20
"""Sessions from this size on keep their index beside them (a smaller one is indexed in a
fraction of a second)."""
INDEX_PART = ".idx.part"
"""Suffix of the record positions a writer spills while it writes a big session."""
FLUSH_INTERVAL_S = 0.05
"""Buffered records reach the file at least this often (plus the caller's poll period)."""
SUFFIX = ".jsonl"


class SessionError(Exception):
    """A file is not a readable session; the message says why."""


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"))


_json_string: Callable[[str], str] = json.encoder.encode_basestring_ascii
"""A str as a JSON string, ASCII only (the C encoder json.dumps itself uses)."""


def _boot_id() -> str | None:
    """This host's boot id: monotonic times compare only within one host boot."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


class SessionWriteError(OSError):
    """A session file could not be created or written; the message says what it holds."""

    def __str__(self) -> str:
        return str(self.strerror)


class _IndexLog:
    """Where each received record of a session went, as it is written: (file offset, time,
    stream offset, newlines before) per record, for the index a big session gets at close.

    Kept in memory while the file is smaller than `CACHE_BYTES`; from then on appended to
    `NAME.jsonl.idx.part` at each flush, so a recording of any length holds at most that
    much. The index is only a cache: a failure here stops the noting, never the recording.
    """

    def __init__(self, path: Path) -> None:
        self.part = path.with_name(path.name + INDEX_PART)
        self.values = array("q")
        self.stream = 0
        self.lines = 0
        self.spilled = False
        self.failed = False

    def add(self, file_offset: int, t_ns: int, size: int, newlines: int) -> None:
        self.values.extend((file_offset, t_ns, self.stream, self.lines))
        self.stream += size
        self.lines += newlines

    def spill(self, file_size: int) -> None:
        """Append what is in memory to the part file once the session is big."""
        if self.failed or file_size < CACHE_BYTES or not self.values:
            return
        try:
            with self.part.open("ab" if self.spilled else "wb") as handle:
                self.values.tofile(handle)
        except OSError:
            self.failed = True
            return
        self.spilled = True
        del self.values[:]

    def finish(self, path: Path, meta: dict[str, Any], split: int | None) -> None:
        """Write the index beside the session (a big one, written whole), drop the part."""
        try:
            if not self.failed and path.stat().st_size >= CACHE_BYTES:
                values = array("q")
                if self.spilled:
                    with self.part.open("rb") as handle:
                        values.frombytes(handle.read())
                values.extend(self.values)
                from bootlab.core.capture.session_index import write_index  # (it reads us)
                write_index(path, meta, values, split)
        except OSError:
            pass  # only a cache: the first open builds it
        finally:
            self.values = array("q")
            with contextlib.suppress(OSError):
                self.part.unlink(missing_ok=True)


class SessionWriter:
    """Appends one boot's records to a new session file.

    A failed write (a full disk, a read-only folder) never damages what is already recorded:
    the file is cut back to its last whole record and closed, `error` says why, and records
    from then on are dropped. Without `on_error` the failure is raised (OSError when the file
    cannot be created, else SessionWriteError from the constructor, `flush` or `maybe_flush`;
    never from `close`); with it, `on_error` is called once instead and the caller carries on
    without the file (the app's console does).
    """

    def __init__(self, path: Path, meta: dict[str, Any], start_ns: int | None = None,
                 on_error: Callable[[SessionWriter], object] | None = None) -> None:
        """Create the file (owner-only, never overwriting) and write its header.

        Args:
            path: the new file.
            meta: label, board, port, baud, profile, settings, ...
            start_ns: CLOCK_MONOTONIC time that record times count from (default: now).
            on_error: called (with this writer) when the file cannot be written, instead of
                raising.

        Raises:
            OSError: the file cannot be created (without `on_error`).
            SessionWriteError: its header cannot be written (without `on_error`).
        """
        self.path = path
        self.start_ns = time.monotonic_ns() if start_ns is None else start_ns
        now = datetime.now(UTC)
        offset_s = (time.monotonic_ns() - self.start_ns) / 1e9
        header = {
            "format": FORMAT, "version": VERSION,
            "started": (now.timestamp() - offset_s),
            "start_monotonic_ns": self.start_ns, "boot_id": _boot_id(),
            "bootlab": __version__, "host": socket.gethostname(),
            **meta,
        }
        header["started_iso"] = datetime.fromtimestamp(header["started"], UTC).isoformat()
        self.error: OSError | None = None
        """Why the file stopped being written (None while it is written)."""
        self.saved_rx_bytes = 0
        """Received bytes in the file (all of them, unless `error`)."""
        self.saved_t_ns: int | None = None
        """Time of the last received bytes in the file."""
        self.closed = False
        self._on_error = on_error
        self._buffer: list[tuple[str, int, int, int]] = []
        """Records not written yet: (JSON, received bytes in it, its time, newlines in
        them)."""
        self._meta = dict(header)
        """The header with the meta records merged, as a loader reads it."""
        self._split: int | None = None
        self._index = _IndexLog(path)
        self._size = 0
        self._fd: int | None = None
        self._last_flush = time.monotonic()
        self._last_sync = self._last_flush
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # a new folder: owner only
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        except OSError as error:
            if on_error is None:
                raise
            self._fail(error)
            return
        self._append([(_dumps(header), 0, 0, 0)])

    def _add(self, record: dict[str, Any], rx: int = 0) -> None:
        if self.error is None:
            self._buffer.append((_dumps(record), rx, record["t"], 0))

    def _append(self, records: list[tuple[str, int, int, int]]) -> None:
        """Write whole records; when that fails, keep those written in full and fail."""
        assert self._fd is not None
        data = "".join(text + "\n" for text, _, _, _ in records).encode("ascii")
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                done += os.write(self._fd, view[done:])
        except OSError as error:
            done = data.rfind(b"\n", 0, done) + 1  # a record cut in two is dropped
            self._saved(records, done)
            self._fail(error)
            return
        self._saved(records, done)

    def _saved(self, records: list[tuple[str, int, int, int]], size: int) -> None:
        """Count the records in the first `size` bytes written (and note where the received
        ones are, for the index)."""
        offset, end = self._size, self._size + size
        self._size = end
        for text, rx, t_ns, newlines in records:
            if offset + len(text) + 1 > end:
                return
            if rx:
                self.saved_rx_bytes += rx
                self.saved_t_ns = t_ns
                self._index.add(offset, t_ns, rx, newlines)
            offset += len(text) + 1

    def _fail(self, error: OSError) -> None:
        """Stop writing: cut the file back to its whole records, close it, report."""
        self.error = error
        self._buffer.clear()
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                if self._size:
                    os.ftruncate(fd, self._size)
                else:
                    self.path.unlink()  # not even the header: no empty file is left
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._on_error is None:
            raise SessionWriteError(error.errno, self.problem()) from None
        self._on_error(self)

    def problem(self) -> str | None:
        """What went wrong writing the file and what it holds, for a person (None: nothing)."""
        if self.error is None:
            return None
        why = self.error.strerror or str(self.error)
        if not self._size:
            return (f"cannot create a session file in {self.path.parent}: {why}; "
                    "choose another folder (--sessions DIR)")
        until = "" if self.saved_t_ns is None else f" up to {self.saved_t_ns / 1e9:.3f} s"
        return (f"cannot write {self.path}: {why}; it holds everything received{until} "
                f"({self.saved_rx_bytes} bytes), nothing after; free some space or record "
                "elsewhere (--sessions DIR)")

    def rx(self, data: bytes, t_ns: int) -> None:
        """Record bytes received at `t_ns` (ns since the start).

        The record is encoded by one C call, without a dict or json.dumps per read: under a
        flood that call runs thousands of times a second. The text is what `_dumps` gives.
        """
        if self.error is None:
            text = _json_string(data.decode("latin-1"))
            self._buffer.append((f'{{"t":{t_ns},"rx":{text}}}', len(data), t_ns,
                                 data.count(b"\n")))

    def before(self, data: bytes, t_ns: int) -> None:
        """Record bytes received at `t_ns`, before the boot's time zero (not of this boot)."""
        self._add({"t": t_ns, "before": data.decode("latin-1")})

    def tx(self, data: bytes, t_ns: int, secret: bool = False) -> None:
        """Record bytes sent; a secret (typed at a password prompt) is stored as its length."""
        if secret:
            self._add({"t": t_ns, "tx_redacted": len(data)})
        else:
            self._add({"t": t_ns, "tx": data.decode("latin-1")})

    def event(self, kind: str, t_ns: int, **fields: Any) -> None:
        """Record an event (gap, reconnect, note ...)."""
        self._add({"t": t_ns, "event": kind, **fields})

    def meta(self, t_ns: int, **fields: Any) -> None:
        """Record metadata learnt while recording."""
        self._add({"t": t_ns, "meta": fields})
        self._meta.update(json.loads(_dumps(fields)))  # as a loader will read it back

    def split(self, t_ns: int, offset: int, next_name: str) -> None:
        """Record that this boot's stream ends at `offset`; the rest went to `next_name`."""
        self._add({"t": t_ns, "split": offset, "next": next_name})
        self._split = offset

    def maybe_flush(self) -> None:
        """Write buffered records if the flush interval has passed."""
        if self._buffer and time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S:
            self.flush()

    def flush(self, sync: bool = False) -> None:
        """Write buffered records now; fsync at most once a second unless `sync`."""
        if self._fd is None:
            return
        if self._buffer:
            records, self._buffer = self._buffer, []
            self._append(records)
            if self._fd is None:
                return
            self._index.spill(self._size)
        now = time.monotonic()
        self._last_flush = now
        if sync or now - self._last_sync >= 1.0:
            try:
                os.fsync(self._fd)
            except OSError as error:
                self._fail(error)
                return
            self._last_sync = now

    def close(self, t_ns: int | None = None, reason: str = "stopped") -> None:
        """Write an end record, flush, fsync and close (a failure stays in `error`)."""
        if self.closed:
            return
        self.closed = True
        if t_ns is None:
            t_ns = time.monotonic_ns() - self.start_ns
        self.event("end", t_ns, reason=reason)
        with contextlib.suppress(SessionWriteError):
            self.flush(sync=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.error is None:
            self._index.finish(self.path, json.loads(_dumps(self._meta)), self._split)


@dataclass
class Session:
    """A loaded session."""

    path: Path
    meta: dict[str, Any]
    chunks: list[tuple[int, bytes]] = field(default_factory=list)
    """Received bytes: (t_ns, data) per read, the stream cut at a split if there is one."""
    sent: list[tuple[int, bytes | int]] = field(default_factory=list)
    """Sent bytes: (t_ns, data), or (t_ns, length) where redacted."""
    events: list[dict[str, Any]] = field(default_factory=list)
    before: list[tuple[int, bytes]] = field(default_factory=list)
    """Bytes stamped before the boot's time zero (the previous boot's, arriving late): kept,
    not part of `chunks`."""
    notices: list[str] = field(default_factory=list)
    """What the loader worked around, in words for a person."""
    split: int | None = None
    """Where the received stream ends (a `split` record: the boot ended there), if it does."""

    @property
    def data(self) -> bytes:
        """The received stream."""
        return b"".join(data for _, data in self.chunks)

    @property
    def label(self) -> str:
        """The session's label (its variant), or ''."""
        return str(self.meta.get("label") or "")

    def chunk_offsets(self) -> tuple[list[int], list[int]]:
        """Stream offset and time of every received chunk."""
        offsets, times, position = [], [], 0
        for t_ns, data in self.chunks:
            offsets.append(position)
            times.append(t_ns)
            position += len(data)
        return offsets, times


RxSink = Callable[[int, int, str], None]
"""Takes an rx record instead of the loaded session: (its offset in the file, t_ns, the bytes
as latin-1 text)."""
_READ_BLOCK = 1 << 22
"""Bytes of the file read at a time: a session of any size is read in bounded memory."""


def load_session(path: Path, on_rx: RxSink | None = None) -> Session:
    """Read a session file, keeping whatever is intact.

    Args:
        path: the file.
        on_rx: given, each received chunk goes to it and `chunks` stays empty (an index, an
            analysis reading the stream as it goes); `split` still says where the stream ends.

    Raises:
        SessionError: the file cannot be read or is not a session at all.
    """
    try:
        with path.open("rb") as handle:
            return _read(path, handle, on_rx)
    except OSError as error:
        raise SessionError(f"{path}: cannot read: {error.strerror or error}") from None


def _lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """The file's lines split on "\\n" (as `bytes.split` gives them, a last empty one
    included), each with its offset, read a block at a time."""
    offset, carry = 0, b""
    while block := handle.read(_READ_BLOCK):
        pieces = (carry + block).split(b"\n")
        carry = pieces.pop()
        for piece in pieces:
            yield offset, piece
            offset += len(piece) + 1
    yield offset, carry


def _read(path: Path, handle: BinaryIO, on_rx: RxSink | None) -> Session:
    lines = _lines(handle)
    _, first = next(lines)
    if not first.strip():
        rest = b"".join(line for _, line in lines)
        if not rest.strip():
            raise SessionError(f"{path}: empty file, not a bootlab session")
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SessionError(f"{path}: not a bootlab session (no '{FORMAT}' header on line 1)")
    session = Session(path, header)
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        session.notices.append(
            f"written by a newer bootlab (format {version!r}, this one reads {VERSION}); "
            "showing what this version understands")
    bad: list[int] = []
    number, pending = 1, None  # the line before the last, which may be a cut-off record
    for offset, line in lines:
        number += 1
        if pending is not None:
            _record(session, *pending, False, bad, on_rx)
        pending = (number, offset, line)
    if pending is not None:  # the file's end: a line without its newline was cut off
        _record(session, *pending, True, bad, on_rx)
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        session.notices.append(f"{len(bad)} unreadable record(s) skipped (line {shown})")
    if session.split is not None:
        _cut(session, session.split)
    return session


def _record(session: Session, number: int, offset: int, line: bytes, last: bool,
            bad: list[int], on_rx: RxSink | None) -> None:
    """Apply the record on line `number` (at `offset`), or say why it is skipped."""
    if not line.strip():
        return
    try:
        record = json.loads(line)
        if not isinstance(record, dict):
            raise ValueError("not an object")
        if on_rx is not None and "rx" in record:
            t, data = record.get("t"), record["rx"]
            if not isinstance(t, int) or not isinstance(data, str):
                raise ValueError("rx record without an integer time or a string")
            data.encode("latin-1")  # the same check a loaded chunk gets
            on_rx(offset, t, data)
        else:
            apply_record(session, record)
    except (ValueError, TypeError, UnicodeEncodeError):
        if last:
            session.notices.append(
                f"the last record was cut off ({len(line)} bytes at line {number}): the "
                "recording stopped abruptly; everything before it is intact")
        else:
            bad.append(number)
        return
    if "split" in record and isinstance(record["split"], int):
        session.split = record["split"]


def apply_record(session: Session, record: dict[str, Any]) -> None:
    """Add one record to a loaded session (ValueError or TypeError: not a valid one)."""
    t = record.get("t")
    if not isinstance(t, int):
        raise ValueError("record without an integer time")
    data = record.get("rx", record.get("tx"))
    if ("rx" in record or "tx" in record) and not isinstance(data, str):
        raise ValueError("rx/tx record without a string")
    if "rx" in record:
        session.chunks.append((t, record["rx"].encode("latin-1")))
    elif "tx" in record:
        session.sent.append((t, record["tx"].encode("latin-1")))
    elif "before" in record:
        if not isinstance(record["before"], str):
            raise ValueError("before record without a string")
        session.before.append((t, record["before"].encode("latin-1")))
    elif "tx_redacted" in record:
        if type(record["tx_redacted"]) is not int:
            raise ValueError("tx_redacted record without a whole number")
        session.sent.append((t, record["tx_redacted"]))
    elif "meta" in record and isinstance(record["meta"], dict):
        session.meta.update(record["meta"])
    elif "event" in record:
        session.events.append(record)


def _cut(session: Session, offset: int) -> None:
    kept: list[tuple[int, bytes]] = []
    position = 0
    for t_ns, data in session.chunks:
        if position >= offset:
            break
        kept.append((t_ns, data[: offset - position]))
        position += len(data)
    session.chunks = kept


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.+-]+")


def session_path(folder: Path, label: str | None, when: datetime | None = None) -> Path:
    """A new, unused file name: `YYYYmmdd-HHMMSS[-label]-NN.jsonl` in `folder`."""
    stamp = (when or datetime.now()).strftime("%Y%m%d-%H%M%S")
    name = stamp + (f"-{_UNSAFE_NAME.sub('_', label)[:40]}" if label else "")
    for index in range(1, 10_000):
        path = folder / f"{name}-{index:02d}{SUFFIX}"
        if not path.exists():
            return path
    raise SessionError(f"{folder}: too many sessions named {name}")


def append_meta(path: Path, **fields: Any) -> None:
    """Append a meta record to a finished session (a new label, say): the loader merges meta
    records in order, so the newest value wins and the file stays append-only.

    Raises:
        SessionError: the file is not a readable session or cannot be written.
    """
    session = load_session(path)
    times = [t for t, _ in session.chunks] + [t for t, _ in session.sent] + \
        [e["t"] for e in session.events if isinstance(e.get("t"), int)]
    record = _dumps({"t": max(times, default=0), "meta": fields}) + "\n"
    try:
        with path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":  # a cut-off last record stays on its own line
                record = "\n" + record
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, record.encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise SessionError(f"{path}: cannot write: {error.strerror or error}") from None


def board_of(meta: dict[str, Any]) -> str:
    """Which board a session's bytes came from: its header's `board` (`--board`), else its
    `port` (one port, one board); '' when neither is recorded."""
    return str(meta.get("board") or meta.get("port") or "")


def iter_sessions(folder: Path) -> Iterator[Path]:
    """Session files in a folder, oldest name first (names start with their time)."""
    if not folder.is_dir():
        return
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        try:
            with path.open("rb") as handle:
                first = handle.readline(65536)
        except OSError:
            continue
        if b'"format":"' + FORMAT.encode() + b'"' in first.replace(b": ", b":"):
            yield path


def port_header(folder: Path, port: object, key: str, newest: int = 50) -> object:
    """The newest value of a meta field (header or later meta record) among the `newest`
    sessions of `port` in `folder`: what a bootlab run found about that board (`arguments`,
    say); None when none records it."""
    for path in list(iter_sessions(folder))[::-1][:newest]:
        try:
            meta = load_session(path).meta
        except SessionError:
            continue
        if meta.get("port") == port and key in meta:
            return meta[key]
    return None
