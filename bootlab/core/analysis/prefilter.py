"""A fast, conservative test for "could this line match any marker?".

Almost every line of a boot log matches no marker, so analysis speed is the speed of rejecting
lines. Trying a hundred regular expressions on each line in Python is far too slow; instead a
whole text is scanned at once (`linescan`): by RE2, every pattern loosened into one expression
and one pass (file analysis), or by Python's `re` and `str.find` (live reads: small, and RE2's
import costs memory). Patterns anchored at the message start (`^...`) are tried only where a
message can start: at a line start, after the `]` of a printk or bootloader stamp (a Raspberry
Pi firmware line, `MESS:...: ` before its message, is always a candidate).

Lines with anything cleaning would change (escapes, controls, bytes >= 0x80) are cleaned
together and scanned again as they will be read; one redrawn by a carriage return or a
backspace, or led by power-on garbage, is always a candidate.

The answer is a superset: a candidate line is then matched exactly (`MarkerSet.match`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from bootlab.core.analysis.linescan import LONE_CR, PythonScan, Re2Scan
from bootlab.core.capture.text import NOISE, clean_lines

_ODD = bytes(c for c in range(256) if (c < 0x20 and c not in (0x09, 0x0A, 0x0D)) or c >= 0x7F)
"""Every byte cleaning changes (a control but tab, newline and CR; 0x7f; >= 0x80)."""
_ODD_CLASS = "[" + "".join(f"\\x{c:02x}" for c in _ODD) + "]"
_MARK_ODD = bytes.maketrans(_ODD, b"\x00" * len(_ODD))
"""`_ODD` as NUL: in a whole text, one translate and a NUL search per such line are far cheaper
than a character-class search over every byte."""
MATCH_LIMIT = 4096
"""Markers see at most this many bytes of a line: no milestone hides deeper in a longer one,
and a megabyte line (a board at the wrong baud rate) then costs no more than a short one."""


class Prefilter:
    """Rejects lines that no pattern can match (see the module docstring)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._patterns = list(patterns)
        self._bulk: Re2Scan | None = None
        self._scan = PythonScan(self._patterns)
        self.needles = self._scan.needles
        self._odd = re.compile(_ODD_CLASS)
        self._lone_cr = re.compile(LONE_CR)
        self._plain = self._scan.scanners[1:]
        # In one short line one search for any needle beats a Python loop over them (in a
        # whole text, str.find per needle is faster: see PythonScan).
        self._any_needle = re.compile("|".join(map(re.escape, self.needles)) or "(?!)")

    def candidate(self, line: str) -> bool:
        """Whether one line (decoded as latin-1, without its newline) may match."""
        if line.endswith("\r"):
            line = line[:-1]  # the CR of a CRLF ending, as in a whole text
        if self._odd.search(line) is not None or self._lone_cr.search(line) is not None:
            return True
        return self.matchable(line)

    def matchable(self, text: str) -> bool:
        """Whether a cleaned line (no escapes left) may match: `candidate` without the
        always-a-candidate rule for characters that cleaning changes, which lets a coloured
        or UTF-8 line that matches nothing skip the markers too."""
        text = "\n" + text
        if any(scanner.search(text) is not None for scanner in self._plain):
            return True
        return self._any_needle.search(text) is not None

    def candidate_starts(self, text: str, raw: bytes | None = None,
                         bulk: bool = False) -> list[int]:
        """Offsets where the candidate lines of a whole text (latin-1) start, ascending.

        Args:
            text: the lines.
            raw: the bytes `text` was decoded from, when the caller has them (saves a copy).
            bulk: scan with RE2 (`Re2Scan`: big texts, where its one pass pays for its import
                and memory); otherwise with Python's `re` (`PythonScan`).
        """
        raw = text.encode("latin-1") if raw is None else raw
        scan: PythonScan | Re2Scan = self._scan
        if bulk:
            if self._bulk is None:
                self._bulk = _re2_scan(tuple(self._patterns))
            scan = self._bulk
        starts = scan.starts(text, raw)
        odd = [start for start in _odd_lines(raw) if start not in starts]
        if odd:
            starts.update(self._odd_candidates(raw, odd, scan))
        return sorted(starts)

    def _odd_candidates(self, raw: bytes, odd: list[int], scan: PythonScan | Re2Scan,
                        ) -> list[int]:
        """Which of the lines starting at `odd` (each holding a byte cleaning changes) may
        match once cleaned, found for all of them at once.

        Markers read a line cleaned (`clean`): its escapes removed, its controls shown as
        pictures, its bytes decoded as UTF-8. Such lines are cleaned together and scanned like
        plain lines: those that are ASCII once cleaned (a coloured line) by `scan`, those with
        other characters (UTF-8 text) by Python's scan, whose classes know them. A line
        redrawn by a carriage return or backspace, or left with a control picture or a
        replacement character (markers may read it from after them), is a candidate as it
        is."""
        found: list[int] = []
        heads: list[bytes] = []
        starts: list[int] = []
        for start in odd:
            end = raw.find(b"\n", start)
            head = raw[start:min(len(raw) if end < 0 else end, start + MATCH_LIMIT)]
            head = head.rstrip(b"\r")
            if b"\r" in head or b"\b" in head:
                found.append(start)
            else:
                heads.append(head)
                starts.append(start)
        ascii_lines: list[tuple[int, str]] = []
        other_lines: list[tuple[int, str]] = []
        cleaned = clean_lines(b"\n".join(heads)).split("\n") if heads else []
        for start, line in zip(starts, cleaned, strict=True):
            if line.isascii():
                ascii_lines.append((start, line))
            elif _NOISE.isdisjoint(line):
                other_lines.append((start, line))
            else:
                found.append(start)
        return found + _scan_lines(ascii_lines, scan) + _scan_lines(other_lines, self._scan)


_NOISE = frozenset(NOISE)


@lru_cache(maxsize=1)
def _re2_scan(patterns: tuple[str, ...]) -> Re2Scan:
    """The RE2 scan of these patterns, built once: every capture of a replay (its playback,
    the scan ahead, each seek's) shares one (~8 MB and ~25 ms to build); kept for the next
    big text until one of another profile comes."""
    return Re2Scan(list(patterns))


def _scan_lines(lines: list[tuple[int, str]], scan: PythonScan | Re2Scan) -> list[int]:
    """The starts (the first of each pair) of the lines (the second) `scan` passes."""
    if not lines:
        return []
    text = "\n".join(line for _, line in lines)
    index: dict[int, int] = {}
    begin = 0
    for start, line in lines:
        index[begin] = start
        begin += len(line) + 1
    # Python's scan reads the text; RE2's, bytes (ASCII here)
    raw = text.encode() if isinstance(scan, Re2Scan) else b""
    return [index[at] for at in scan.starts(text, raw)]


_BLOCK = 1 << 20
"""Bytes marked at a time: a big text is never copied whole."""


def _odd_lines(raw: bytes) -> list[int]:
    """Where the lines holding a byte cleaning changes start (a control, 0x7f, >= 0x80).

    One translate per block maps every such byte to NUL, and a NUL search (memchr) finds them:
    far cheaper than a character-class search over every byte."""
    found: list[int] = []
    position = 0
    for block in range(0, len(raw), _BLOCK):
        end = min(block + _BLOCK, len(raw))
        if position >= end:
            continue
        marked = raw[block:end].translate(_MARK_ODD)
        at = marked.find(b"\x00", max(position - block, 0))
        while at >= 0:
            line_start = raw.rfind(b"\n", 0, block + at) + 1
            found.append(line_start)
            next_line = raw.find(b"\n", block + at)
            position = len(raw) if next_line < 0 else next_line + 1
            if position >= end:
                break
            at = marked.find(b"\x00", position - block)
    return found
