"""Lines as plain text with a time column: what `record` echoes, what `--log FILE` keeps, and
the labels of the app's time column.

`record` echoes per read, not per line: a read's lines but the first share one stamp
(`LineBlock`), so a flood is cleaned and formatted with a few string operations per read, not
Python work per line.
"""

from __future__ import annotations

import contextlib
from bisect import bisect_right
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from bootlab.core.capture.lines import Line, LineBlock
from bootlab.core.capture.stamps import parse_stamp
from bootlab.core.capture.text import clean, clean_lines

TIME_MODES = ("elapsed", "delta", "wall", "kernel", "off")
"""Time column: since the boot's reference point, since the previous line, the wall clock,
the kernel's printk time, or none (the lines alone, as a plain terminal shows them)."""


class TextLogError(Exception):
    """The plain-text log cannot be opened or written (the session is not affected)."""


def time_label(mode: str, line: Line, text: str, before_ns: int | None = None,
               epoch_s: float | None = None,
               references: list[tuple[int, float]] | None = None) -> str:
    """A line's time in the time column's `mode` ("" where the line holds no such time).

    Args:
        mode: one of TIME_MODES ("off": "").
        line: the line.
        text: its cleaned text (a printk time is read from it).
        before_ns: the previous line's time (for "delta").
        epoch_s: the wall clock at the session's time zero (for "wall").
        references: each boot's (first line number, reference time in s) (for "elapsed":
            the time since the reference of the boot the line is in; none: since time zero).
    """
    if mode == "off":
        return ""
    if mode == "kernel":
        kernel_s = parse_stamp(text).kernel_s
        return "" if kernel_s is None else f"{kernel_s:.6f}"
    if line.t_ns is None:
        return ""
    t_s = line.t_ns / 1e9
    if mode == "wall":
        if epoch_s is None:
            return ""
        return datetime.fromtimestamp(epoch_s + t_s).strftime("%H:%M:%S.%f")[:12]
    if mode == "delta":
        return "" if before_ns is None else f"{(line.t_ns - before_ns) / 1e9:+.6f}"
    references = references or []
    at = bisect_right(references, (line.number, float("inf"))) - 1
    zero = references[at][1] if at >= 0 else 0.0
    return f"{t_s - zero:.6f}"


def block_texts(raw: bytes) -> list[str]:
    """The cleaned text (`clean`) of each line of `raw`, whole lines each ending in b"\\n".

    Lines with no carriage return inside and no backspace (nearly all) are cleaned in one
    pass; a CR-LF line end is dropped as `clean` drops it.
    """
    body = raw.replace(b"\r\n", b"\n")[:-1]
    if b"\r" in body or b"\b" in body:
        return [clean(part) for part in raw[:-1].split(b"\n")]
    return clean_lines(body).split("\n")


class Echo:
    """Lines as grabserial prints them, `[elapsed delta] text`: seconds since the first
    line's first byte, and since the line before."""

    def __init__(self) -> None:
        self._first_ns: int | None = None
        self._previous_ns: int | None = None

    def _prefix(self, t_ns: int | None) -> str:
        if t_ns is None:  # no host time: the previous line's
            t_ns = self._previous_ns if self._previous_ns is not None else 0
        if self._first_ns is None:
            self._first_ns = t_ns
        before = t_ns if self._previous_ns is None else self._previous_ns
        self._previous_ns = t_ns
        return f"[{(t_ns - self._first_ns) / 1e9:11.6f} {(t_ns - before) / 1e9:9.6f}] "

    def block(self, block: LineBlock) -> str:
        """The text of a read's lines (its unterminated tail too), each on its own line."""
        out = []
        if block.count:
            texts = block_texts(block.raw)
            out.append(self._prefix(block.first_t_ns) + texts[0] + "\n")
            if len(texts) > 1:
                out.append(self._prefix(block.t_ns) + texts[1] + "\n")
            if len(texts) > 2:
                same = self._prefix(block.t_ns)  # every further line: the same stamp
                out.append(same + ("\n" + same).join(texts[2:]) + "\n")
        if block.tail is not None:
            out.append(self.line(block.tail))
        return "".join(out)

    def line(self, line: Line) -> str:
        """One line's text."""
        return self._prefix(line.t_ns) + clean(line.raw) + "\n"


def texts_of(lines: Sequence[Line]) -> list[str]:
    """The cleaned text of each line (`block_texts` over them all: one pass, mostly)."""
    if not lines:
        return []
    return block_texts(b"".join(line.raw + b"\n" for line in lines))


class TextLog:
    """A plain-text copy of the console beside the session (`--log FILE`): appended to (an
    earlier log is never overwritten), flushed at every write, so a crash loses nothing
    written; the session, not this file, is the record (exact bytes and times)."""

    def __init__(self, path: Path) -> None:
        """Raises:
            TextLogError: the file cannot be opened for appending.
        """
        self.path = path
        self._before_ns: int | None = None
        """The last line's time (the next one's delta)."""
        try:
            self._file: TextIO | None = path.open("a", encoding="utf-8")
        except OSError as error:
            raise TextLogError(f"{path}: cannot open the log: {error.strerror or error}") \
                from None

    def write(self, text: str) -> None:
        """Append text (whole lines).

        Raises:
            TextLogError: the write failed (a full disk, a removed drive); the log is closed.
        """
        if self._file is None or not text:
            return
        try:
            self._file.write(text)
            self._file.flush()
        except OSError as error:
            self.close()
            raise TextLogError(f"{self.path}: the log cannot be written: "
                               f"{error.strerror or error}; it is closed (the session "
                               "goes on)") from None

    def lines(self, lines: Sequence[Line], mode: str, epoch_s: float | None = None,
              references: list[tuple[int, float]] | None = None) -> None:
        """Append lines as the app's console shows them: the time column in `mode` (a
        right-aligned label and a space; none when "off"), then the text.

        Raises:
            TextLogError: as `write`.
        """
        out = []
        for line, text in zip(lines, texts_of(lines), strict=True):
            if mode == "off":
                out.append(text + "\n")
            else:
                label = time_label(mode, line, text, self._before_ns, epoch_s, references)
                out.append(f"{label:>12} {text}\n")
            self._before_ns = line.t_ns
        self.write("".join(out))

    def close(self) -> None:
        """Close the file (again: nothing)."""
        if self._file is not None:
            file, self._file = self._file, None
            with contextlib.suppress(OSError):  # already said, or nothing was left to write
                file.close()
