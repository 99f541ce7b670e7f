"""Session files: one boot, every byte received and sent with its host time, append-only.

Format (version 1), JSON Lines, ASCII only:

- line 1, the header: `{"format": "bootlab-session", "version": 1, "started": ISO wall time,
  "started_epoch": s, "label", "board", "port", "baud", "profile", "settings": {...},
  "bootlab": version, "host": name, ...}`
- then one record per line, `t` in ns since the start (CLOCK_MONOTONIC):
  - `{"t": ns, "rx": "<bytes as latin-1>"}`: bytes received in one read (JSON escapes keep every
    byte value exact, so the record is lossless);
  - `{"t": ns, "tx": "<bytes as latin-1>"}`: bytes sent;
  - `{"t": ns, "tx_redacted": n}`: n bytes typed at a password prompt, not stored;
  - `{"t": ns, "event": "...", ...}`: gap, reconnect, note, end;
  - `{"t": ns, "meta": {...}}`: metadata learnt while recording (merged into the header);
  - `{"t": ns, "split": offset, "next": "file"}`: the boot ended at this byte offset of the
    received stream; the bytes after it also start the next boot's file.

Records are buffered and written at least every `FLUSH_INTERVAL_S`, so a crash or kill -9
loses at most that much. A loader reads whatever is intact and says what it skipped.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bootlab import __version__

FORMAT = "bootlab-session"
VERSION = 1
FLUSH_INTERVAL_S = 0.1
"""Buffered records reach the file at least this often (plus the caller's poll period)."""
SUFFIX = ".jsonl"


class SessionError(Exception):
    """A file is not a readable session; the message says why."""


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"))


def _boot_id() -> str | None:
    """This host's boot id: monotonic times compare only within one host boot."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


class SessionWriter:
    """Appends one boot's records to a new session file."""

    def __init__(self, path: Path, meta: dict[str, Any], start_ns: int | None = None) -> None:
        """Create the file (owner-only, never overwriting) and write its header.

        Args:
            path: the new file.
            meta: label, board, port, baud, profile, settings, ...
            start_ns: CLOCK_MONOTONIC time that record times count from (default: now).
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
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        self._buffer: list[str] = []
        self._last_flush = time.monotonic()
        self._last_sync = self._last_flush
        self.rx_bytes = 0
        self.closed = False
        self._write(_dumps(header) + "\n")

    def _write(self, text: str) -> None:
        data = text.encode("ascii")
        while data:
            written = os.write(self._fd, data)
            data = data[written:]

    def rx(self, data: bytes, t_ns: int) -> None:
        """Record bytes received at `t_ns` (ns since the start)."""
        self._buffer.append(_dumps({"t": t_ns, "rx": data.decode("latin-1")}))
        self.rx_bytes += len(data)

    def tx(self, data: bytes, t_ns: int, secret: bool = False) -> None:
        """Record bytes sent; a secret (typed at a password prompt) is stored as its length."""
        if secret:
            self._buffer.append(_dumps({"t": t_ns, "tx_redacted": len(data)}))
        else:
            self._buffer.append(_dumps({"t": t_ns, "tx": data.decode("latin-1")}))

    def event(self, kind: str, t_ns: int, **fields: Any) -> None:
        """Record an event (gap, reconnect, note ...)."""
        self._buffer.append(_dumps({"t": t_ns, "event": kind, **fields}))

    def meta(self, t_ns: int, **fields: Any) -> None:
        """Record metadata learnt while recording."""
        self._buffer.append(_dumps({"t": t_ns, "meta": fields}))

    def split(self, t_ns: int, offset: int, next_name: str) -> None:
        """Record that this boot's stream ends at `offset`; the rest went to `next_name`."""
        self._buffer.append(_dumps({"t": t_ns, "split": offset, "next": next_name}))

    def maybe_flush(self) -> None:
        """Write buffered records if the flush interval has passed."""
        if self._buffer and time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S:
            self.flush()

    def flush(self, sync: bool = False) -> None:
        """Write buffered records now; fsync at most once a second unless `sync`."""
        if self._buffer:
            text = "\n".join(self._buffer) + "\n"
            self._buffer.clear()
            self._write(text)
        now = time.monotonic()
        self._last_flush = now
        if sync or now - self._last_sync >= 1.0:
            os.fsync(self._fd)
            self._last_sync = now

    def close(self, t_ns: int | None = None, reason: str = "stopped") -> None:
        """Write an end record, flush, fsync and close."""
        if self.closed:
            return
        if t_ns is None:
            t_ns = time.monotonic_ns() - self.start_ns
        self.event("end", t_ns, reason=reason)
        self.flush(sync=True)
        os.close(self._fd)
        self.closed = True


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
    notices: list[str] = field(default_factory=list)
    """What the loader worked around, in words for a person."""

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


def load_session(path: Path) -> Session:
    """Read a session file, keeping whatever is intact.

    Raises:
        SessionError: the file cannot be read or is not a session at all.
    """
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SessionError(f"{path}: cannot read: {error.strerror or error}") from None
    if not raw.strip():
        raise SessionError(f"{path}: empty file, not a bootlab session")
    lines = raw.split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SessionError(f"{path}: not a bootlab session (no '{FORMAT}' header on line 1)")
    session = Session(path, header)
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        session.notices.append(
            f"written by a newer bootlab (format {version}, this one reads {VERSION}); "
            "showing what this version understands")
    truncated_tail = not raw.endswith(b"\n")
    bad: list[int] = []
    split: int | None = None
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not an object")
            _apply(session, record)
        except (ValueError, TypeError, UnicodeEncodeError):
            if truncated_tail and number == len(lines):
                session.notices.append(
                    f"the last record was cut off ({len(line)} bytes at line {number}): the "
                    "recording stopped abruptly; everything before it is intact")
            else:
                bad.append(number)
            continue
        if "split" in record and isinstance(record["split"], int):
            split = record["split"]
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        session.notices.append(f"{len(bad)} unreadable record(s) skipped (line {shown})")
    if split is not None:
        _cut(session, split)
    return session


def _apply(session: Session, record: dict[str, Any]) -> None:
    t = record.get("t")
    if not isinstance(t, int):
        raise ValueError("record without an integer time")
    if "rx" in record:
        session.chunks.append((t, record["rx"].encode("latin-1")))
    elif "tx" in record:
        session.sent.append((t, record["tx"].encode("latin-1")))
    elif "tx_redacted" in record:
        session.sent.append((t, int(record["tx_redacted"])))
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
