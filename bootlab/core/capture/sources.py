"""Boot logs of any origin (sessions, grabserial, serial captures, dmesg) read into one form.

Analysis and exports take a `Source`: the received bytes, a host time per line where the log
recorded one, and what had to be worked around, so every kind of input goes the same way.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from bootlab.core.capture.linemap import mapped_chunks
from bootlab.core.capture.linetime import LineNumber, LineTime, chunk_line_time, list_line_time
from bootlab.core.capture.session import CACHE_BYTES, FORMAT, Session, SessionError, load_session
from bootlab.core.capture.session_index import SessionIndex, session_index
from bootlab.core.capture.text import clean

KINDS = ("session", "grabserial", "plain", "dmesg")
"""What `open_source` reads; `kind=None` picks one from the file's content."""

# grabserial prefixes every line with `[elapsed delta] ` (-t, "%4.6f %2.6f"), `[HH:MM:SS.ffffff
# delta] ` (-T), or both clock and elapsed; delta is always the time since the previous line.
_CLOCK = rb"\d{1,2}:\d\d:\d\d(?:\.\d{1,9})?"
_NUMBER = rb"-?\d{1,10}\.\d{1,9}"
_GRABSERIAL = re.compile(
    rb"\[ *(?:(?P<clock>" + _CLOCK + rb") +)?(?:(?P<elapsed>" + _NUMBER + rb") +)?"
    rb"(?:(?P<clock_after>" + _CLOCK + rb") +)?(?P<delta>" + _NUMBER + rb") *\] ?"
)
_PRINTK = re.compile(rb"^(?:<\d{1,2}>)?\[[ \t]{0,12}\d{1,8}\.\d{6}\]", re.MULTILINE)
# `journalctl -k -o short-monotonic`: the printk time, then "HOST kernel: " before the message.
_JOURNAL = re.compile(rb"^(\[[ \t]{0,12}\d{1,8}\.\d{6}\] )[^\s\[\]]+ kernel: ", re.MULTILINE)
_JOURNAL_PREFIXED = re.compile(rb"\n" + _JOURNAL.pattern[1:] + rb"()")
_JOURNAL_NOTE = re.compile(rb"-- .* --\r?$")
"""journalctl's own lines between boots (`-- Boot 0123... --`), left out when counting."""
# Line starts, for counting over a whole file: each led by its newline (the engine skips to a
# literal fast; `^` in MULTILINE mode would be tried at every byte), the first line apart.
_PRINTK_LINES = re.compile(rb"\n" + _PRINTK.pattern[1:] + rb"()")
_JOURNAL_LINES = re.compile(rb"\n-- [^\n]* --\r?(?=\n|\Z)()")
_BLANK_LINES = re.compile(rb"\n[ \t\r\x0b\x0c]*(?=\n|\Z)()")
"""Lines `bytes.strip` leaves empty."""

_DETECT_LINES = 200
"""Non-empty lines looked at to recognise grabserial output."""
_DMESG_SHARE = 0.9
"""Share of non-empty lines starting with a printk time that makes a file dmesg output."""
_RESTART_TOLERANCE_S = 1e-4
"""An elapsed time further than this from the previous one plus the delta is a timer restart."""
_BINARY_SHARE = 0.3
"""Above this share of bytes that are not text, a file of no known kind is refused as binary."""
_RARE_CONTROLS = bytes(c for c in range(0x20) if c not in b"\t\n\r\x1b\x08\x07\x0c") + b"\x7f"
_REPLACEMENT = "\ufffd".encode()


class SourceError(Exception):
    """A file cannot be read as a boot log; the message names it and says what to do."""


@dataclass
class Source:
    """A boot log ready for analysis and export, whatever file it came from."""

    path: Path
    kind: str
    """One of KINDS."""
    held: bytes | None
    """The received stream when it is in memory (see `data`); None while a session read
    through its index (`stream`) is not."""
    line_time: LineTime | None
    """Host time of a line in seconds; None when the log recorded no host time."""
    meta: dict[str, Any] = field(default_factory=dict)
    """A session's header (label, board, started ...), or {"imported_from": kind}."""
    notices: list[str] = field(default_factory=list)
    """What was worked around, in words for a person."""
    session: Session | None = None
    """The loaded session, for kind "session"."""
    line_number: LineNumber | None = None
    """A stream line's number in the file, where the file holds lines the stream does not
    (grabserial's own messages); None: the same."""
    stream: SessionIndex | None = None
    """A big session's index: its stream is read from the file when needed, not held."""

    @property
    def data(self) -> bytes:
        """The received stream (for grabserial: the board's lines without grabserial's
        stamps), read whole on first use when it is not held."""
        if self.held is None:
            self.held = b"".join(self.stream.blocks()) if self.stream is not None else b""
        return self.held

    def blocks(self) -> Iterator[bytes]:
        """The received stream in consecutive blocks: a big session a few megabytes at a time
        (an analysis of it holds no more), anything else whole."""
        if self.held is None and self.stream is not None:
            yield from self.stream.blocks()
        else:
            yield self.data


def open_source(path: Path, kind: str | None = None) -> Source:
    """Read a boot log of the given kind, or of the kind its content shows when `kind` is None.

    Raises:
        SourceError: the file is missing, unreadable, empty, or not of the kind asked for.
    """
    if kind is not None and kind not in KINDS:
        raise SourceError(f"{path}: unknown log kind {kind!r}; choose one of {', '.join(KINDS)}")
    notices: list[str] = []
    head = _read(path, _HEAD_BYTES)
    end = head.find(b"\n")
    if kind == "session" or (kind is None and _is_session_header(
            _as_utf8(head if end < 0 else head[:end], []))):
        return _open_session(path)
    data = _as_utf8(head if len(head) < _HEAD_BYTES else _read(path), notices)
    if kind is None:
        kind = detect_kind(data)
        if kind != "session" and _damaged_header(data):
            raise SourceError(f"{path}: a bootlab session whose first line (its header) is cut "
                              "off or damaged; nothing in it can be read")
        if kind == "plain" and (share := _not_text_share(data)) > _BINARY_SHARE:
            raise SourceError(f"{path}: does not look like a boot log ({share:.0%} of its first "
                              "bytes are not text: a binary or compressed file?); "
                              "--kind plain reads it anyway")
    if kind == "session":  # a header longer than the head read first
        return _open_session(path)
    if kind == "grabserial":
        return _open_grabserial(path, data, notices)
    if kind == "dmesg":
        return _open_dmesg(path, data, notices)
    return Source(path, "plain", data, None, {"imported_from": "plain"}, notices)


def detect_kind(data: bytes) -> str:
    """The kind of log `data` holds: a session header, grabserial stamps, printk times, or plain."""
    end = data.find(b"\n")
    if _is_session_header(data if end < 0 else data[:end]):
        return "session"
    head = _first_lines(data, _DETECT_LINES)
    if not head:
        return "plain"
    if 2 * sum(1 for line in head if _grabserial_stamp(line) is not None) > len(head):
        return "grabserial"
    # The share of printk lines, counted over the whole file at C speed (no list of lines):
    # every line minus blank ones and journalctl's notes, against those led by a printk time.
    first = data if end < 0 else data[:end]
    lines = (data.count(b"\n") + 1 - _count(_BLANK_LINES, data, not first.strip())
             - _count(_JOURNAL_LINES, data, _JOURNAL_NOTE.match(first) is not None))
    if _count(_PRINTK_LINES, data, _PRINTK.match(first) is not None) >= _DMESG_SHARE * lines:
        return "dmesg"
    return "plain"


def _first_lines(data: bytes, wanted: int) -> list[bytes]:
    """The first `wanted` non-blank lines of `data`, splitting no more of it than needed."""
    size = 65536
    while True:
        lines = data[:size].split(b"\n")
        if size < len(data):
            lines.pop()  # cut at `size`: not a whole line
        kept = [line for line in lines if line.strip()]
        if len(kept) >= wanted or size >= len(data):
            return kept[:wanted]
        size *= 4


def _count(pattern: re.Pattern[bytes], data: bytes, first: bool) -> int:
    """Lines `pattern` (led by a newline, ending in an empty group) finds after the first
    one, plus the first one when `first` says it is one too. findall lists the shared empty
    bytes object for each, not a copy of each match."""
    return len(pattern.findall(data)) + first


def _damaged_header(data: bytes) -> bool:
    """The file starts as a session header does, but no valid header follows."""
    first = data.split(b"\n", 1)[0]
    start = b'{"format":"' + FORMAT.encode() + b'"'
    return first.startswith(start) or (b"\n" not in data and len(first) >= 4
                                       and start.startswith(first))


def _not_text_share(data: bytes) -> float:
    """Share of the first 64 KiB that no console prints: NUL and other rare C0 controls, and
    bytes that are not UTF-8."""
    sample = data[:65536]
    rare = len(sample) - len(sample.translate(None, _RARE_CONTROLS))
    invalid = sample.decode("utf-8", "replace").count("\ufffd") - sample.count(_REPLACEMENT)
    return (rare + invalid) / len(sample) if sample else 0.0


_HEAD_BYTES = 1 << 16
"""Bytes read first: a session is known by its first line and then read on its own."""


def _read(path: Path, limit: int = -1) -> bytes:
    """The file's bytes (its first `limit` when given)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file; check the path") from None
    except OSError as error:
        raise SourceError(f"{path}: cannot read: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SourceError(f"{path}: is a directory; give a log file or a session file in it")
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(f"{path}: not a regular file (a device or a pipe?); "
                          "save the log to a file first")
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit)
    except OSError as error:
        raise SourceError(f"{path}: cannot read: {error.strerror or error}") from None
    if not raw:
        raise SourceError(f"{path}: empty file; there is no boot log in it")
    return raw


def _as_utf8(raw: bytes, notices: list[str]) -> bytes:
    """Undo what Windows tools add to a saved capture: a UTF-16 encoding or a UTF-8 BOM."""
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        sample = raw[2:2050]
        high = sample[1::2] if raw[:2] == b"\xff\xfe" else sample[0::2]
        # Only text in UTF-16 has a NUL in (nearly) every other byte; a board's power-on noise
        # may well start with 0xff 0xfe.
        if high and high.count(0) >= 0.9 * len(high):
            encoding = "utf-16-le" if raw[:2] == b"\xff\xfe" else "utf-16-be"
            notices.append(f"the file is {encoding.upper()} text (as PowerShell saves it); "
                           "read it as UTF-8")
            return raw[2:].decode(encoding, errors="replace").encode("utf-8")
    if raw.startswith(b"\xef\xbb\xbf"):
        notices.append("removed a UTF-8 byte order mark from the start of the file")
        return raw[3:]
    return raw


def _is_session_header(first: bytes) -> bool:
    if not first.lstrip().startswith(b"{") or FORMAT.encode() not in first:
        return False
    try:
        header = json.loads(first)
    except ValueError:
        return False
    return isinstance(header, dict) and header.get("format") == FORMAT


def _open_session(path: Path) -> Source:
    """A session: loaded whole, or through its index when it is big (`CACHE_BYTES`)."""
    try:
        if path.stat().st_size >= CACHE_BYTES:
            return _indexed_source(session_index(path))
        session = load_session(path)
    except SessionError as error:
        raise SourceError(str(error)) from None
    except OSError as error:
        raise SourceError(f"{path}: cannot read: {error.strerror or error}") from None
    notices = list(session.notices)
    if not session.chunks:
        notices.append("the session holds no received bytes")
    session.chunks = mapped_chunks(session.chunks, session.meta.get("imap"))
    line_time = chunk_line_time(*session.chunk_offsets())
    return Source(path, "session", session.data, line_time, session.meta, notices, session)


def _indexed_source(index: SessionIndex) -> Source:
    """A session read through its index: nothing of its stream is held."""
    notices = list(index.notices)
    if not len(index):
        notices.append("the session holds no received bytes")
    return Source(index.path, "session", None, chunk_line_time(index.stream_offsets,
                                                                 index.times_ns),
                  dict(index.meta), notices, stream=index)


def _grabserial_stamp(line: bytes) -> re.Match[bytes] | None:
    """grabserial's stamp at the start of a line (a lone number is a printk time, not one)."""
    match = _GRABSERIAL.match(line)
    if match is None or not (match["clock"] or match["elapsed"] or match["clock_after"]):
        return None
    if match["clock"] and match["clock_after"]:
        return None
    return match


def _open_grabserial(path: Path, data: bytes, notices: list[str]) -> Source:
    lines = data.split(b"\n")
    ends_unterminated = lines[-1] != b""
    if not ends_unterminated:
        lines.pop()
    kept: list[bytes] = []
    numbers: list[int] = []
    times: list[float] = []
    dropped: list[tuple[int, bytes]] = []
    restarts: list[int] = []
    last_kept = 0
    previous_elapsed: float | None = None
    for number, line in enumerate(lines, start=1):
        stamp = _grabserial_stamp(line)
        if stamp is None:
            dropped.append((number, line))
            continue
        delta = float(stamp["delta"])
        elapsed = float(stamp["elapsed"]) if stamp["elapsed"] else None
        if not times:
            t = delta if elapsed is None else elapsed
        elif elapsed is None or previous_elapsed is None:
            t = times[-1] + delta
        elif abs(previous_elapsed + delta - elapsed) <= _RESTART_TOLERANCE_S:
            # Differences of printed elapsed times do not add up rounding as deltas would.
            t = times[-1] + (elapsed - previous_elapsed)
        else:
            t = times[-1] + delta  # the -m pattern restarted grabserial's timer
            restarts.append(number)
        previous_elapsed = elapsed
        times.append(t)
        numbers.append(number)
        kept.append(line[stamp.end():])
        last_kept = number
    if not kept:
        raise SourceError(f"{path}: no line starts with a grabserial time stamp "
                          "('[elapsed delta] '); open it as a plain log instead")
    if restarts:
        notices.append(
            f"grabserial restarted its timer {len(restarts)} time(s) (its -m pattern matched; "
            f"first at file line {restarts[0]}): host times run on from the first line, "
            "adding each line's delta")
    if dropped:
        notices.append(_dropped_notice(dropped))
    tail = b"" if ends_unterminated and last_kept == len(lines) else b"\n"
    return Source(path, "grabserial", b"\n".join(kept) + tail, list_line_time(times),
                  {"imported_from": "grabserial"}, notices,
                  line_number=lambda n: numbers[n - 1] if 1 <= n <= len(numbers) else n)


def _dropped_notice(dropped: list[tuple[int, bytes]]) -> str:
    texts = ((number, line) for number, line in dropped if line.strip())
    shown = [f"line {number}: {clean(line[:200])[:60]!r}" for number, line in islice(texts, 4)]
    text = (f"left out {len(dropped)} line(s) without a grabserial time stamp (grabserial's own "
            "messages, not board output)")
    if shown:
        text += ": " + "; ".join(shown[:3]) + (" ..." if len(shown) > 3 else "")
    return text


def _open_dmesg(path: Path, data: bytes, notices: list[str]) -> Source:
    journal = 0 if data.find(b" kernel: ") < 0 else \
        _count(_JOURNAL_PREFIXED, data, _JOURNAL.match(data) is not None)
    if journal and 2 * journal >= _count(_PRINTK_LINES, data, _PRINTK.match(data) is not None):
        data = _JOURNAL.sub(rb"\1", data)
        notices.append(f"removed journalctl's 'HOST kernel: ' prefix from {journal} line(s) so "
                       "the messages read as dmesg prints them")
        return Source(path, "dmesg", data, None, {"imported_from": "journalctl"}, notices)
    return Source(path, "dmesg", data, None, {"imported_from": "dmesg"}, notices)
