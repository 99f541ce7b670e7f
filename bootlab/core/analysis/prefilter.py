"""A fast, conservative test for "could this line match any marker?".

Almost every line of a boot log matches no marker, so analysis speed is the speed of rejecting
lines. Trying a hundred regular expressions on each line in Python is far too slow; instead:

- patterns anchored at the message start (`^...`) become one alternation that is tried only
  where a message can start: after a newline, or after the `]` of a printk or bootloader
  stamp. The regex engine skips every other position with a one-character test, and skips an
  alternative whose first character differs at almost no cost (a Raspberry Pi firmware line,
  `MESS:...: ` before its message, is always a candidate);
- the other patterns contribute a literal they cannot match without (found by parsing the
  pattern, `regex_parse`), searched with `str.find`; a pattern with no such literal is
  searched as it is;
- lines with anything cleaning would change (escapes, NUL, CR inside the line, bytes >= 0x80)
  are always candidates.

The answer is a superset: a candidate line is then matched exactly (`MarkerSet.match`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bootlab.core.analysis.regex_parse import anchored, literal_first, literals

# Each scanner starts with a single character class or literal, so the regex engine can skip
# to the positions where it may match without trying the pattern anywhere else.
_SPECIAL = (r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\xff]", r"\r(?!\n)")
_ODD = bytes(c for c in range(256) if (c < 0x20 and c not in (0x09, 0x0A, 0x0D)) or c >= 0x7F)
_MARK_ODD = bytes.maketrans(_ODD, b"\x00" * len(_ODD))
"""Every byte the first _SPECIAL scanner looks for, as NUL: in a whole text, one translate and
a NUL search per such line are far cheaper than a character-class search over every byte."""
_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


def split_flags(pattern: str) -> tuple[str, str]:
    """A pattern's leading global flags (`(?i)` -> "i") and the rest of it."""
    flags = _GLOBAL_FLAGS.match(pattern)
    return ("", pattern) if flags is None else (flags.group(1), pattern[flags.end():])


def unnamed(pattern: str) -> str:
    """Drop group names so several patterns can share one alternation."""
    return re.sub(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>", "(?:", pattern)


def _body(pattern: str) -> str:
    """A pattern without its leading `^` and trailing `$`, as a scoped group."""
    flags, rest = split_flags(pattern)
    rest = rest[1:] if rest.startswith("^") else rest
    if rest.endswith("$") and not rest.endswith("\\$"):
        rest = rest[:-1]
    return f"(?{flags}:{unnamed(rest)})" if flags else f"(?:{unnamed(rest)})"


_SPECIAL_CHARS = frozenset("\\.^$*+?{}[]|()")


def _by_head(patterns: list[str]) -> str:
    """Anchored patterns as one alternation, those starting with the same plain character
    grouped under it: at each message start the engine tries one group, not every pattern."""
    groups: dict[str, list[str]] = {}
    others: list[str] = []
    for pattern in patterns:
        flags, rest = split_flags(pattern)
        rest = unnamed(rest[1:])
        if rest.endswith("$") and not rest.endswith("\\$"):
            rest = rest[:-1]
        head = rest[:1]
        if flags or len(rest) < 2 or head in _SPECIAL_CHARS or rest[1] in "*+?{":
            others.append(_body(pattern))
        else:
            groups.setdefault(head, []).append(rest[1:])
    alternatives = [re.escape(head) + "(?:" + "|".join(rests) + ")"
                    for head, rests in groups.items()]
    return "|".join(alternatives + others)


def needle(pattern: str) -> str | None:
    """The longest literal the pattern cannot match without, if one is long enough."""
    return max(literals(pattern), key=len, default=None)


_FIRMWARE_STAMP = "MESS:"
_SHARED_MIN = 5
"""A literal that several patterns share is one needle for all of them from this length."""
_COMMON = frozenset({"Starting", "starting", "Started", "Loading", "loading", "Booting",
                     "booting", "version", "Version", "kernel", "Kernel", "Reached", "target",
                     "Mounted", "mounted", "device", "module", "enabled", "initial", "linux",
                     "Linux", "will", "seconds", "ready"})
"""Words too common in boot logs for a needle to be one of them or part of one (systemd's
"Starting ...")."""


def _needles(runs: list[list[str]]) -> list[str]:
    """Few needles that together find every pattern (each given by the literal runs it cannot
    match without): a text several patterns share (at least _SHARED_MIN long, not part of a
    common word) is taken once for all of them, the most shared first; a pattern no shared
    text covers gets its longest run. Every needle is a full pass over the text, so fewer
    needles is faster analysis."""
    covers: dict[str, set[int]] = {}
    for index, pattern_runs in enumerate(runs):
        for run in pattern_runs:
            # whole words only: a piece of a word ("ing in") is in too many lines
            cuts = [i for i in range(len(run) + 1) if i in (0, len(run))
                    or not (run[i - 1].isalnum() and run[i].isalnum())]
            for start in cuts:
                for end in cuts:
                    if end - start >= _SHARED_MIN:
                        covers.setdefault(run[start:end], set()).add(index)
    shared = [(text, covered) for text, covered in covers.items() if len(covered) > 1
              and not any(text.strip() in word for word in _COMMON)]
    uncovered = set(range(len(runs)))
    chosen: list[str] = []
    while shared:
        text, covered = max(shared, key=lambda tc: (len(tc[1] & uncovered), len(tc[0])))
        if len(covered & uncovered) < 2:
            break
        chosen.append(text)
        uncovered -= covered
    for index in sorted(uncovered):
        if not any(n in run for n in chosen for run in runs[index]):
            chosen.append(max(runs[index], key=len))
    # A needle holding another needle finds nothing the shorter one would not.
    return [n for n in chosen if not any(other != n and other in n for other in chosen)]


class Prefilter:
    """Rejects lines that no pattern can match (see the module docstring)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        at_start: list[str] = []
        found_by: list[list[str]] = []
        slow: list[str] = []
        for pattern in patterns:
            runs = literals(pattern)
            if anchored(pattern) and (literal_first(pattern) or not runs):
                at_start.append(pattern)
            elif not runs:
                slow.append(_body(pattern))
            elif runs not in found_by:
                found_by.append(runs)
        self.needles = _needles(found_by)
        self._special = [re.compile(p) for p in _SPECIAL]
        self._scanners = list(self._special)
        if at_start:
            # Two scans, each led by one literal character (the engine then skips to it fast;
            # one led by the class [\n\]] tests every character, three times slower): a
            # message starts a line, or follows a stamp's "]" and the one space the exact
            # stamp parser takes ("?+", possessive, tries the alternation once, not twice).
            alternation = "(?:" + _by_head(at_start) + ")"
            self._scanners.append(re.compile(r"\n" + alternation))
            self._scanners.append(re.compile(r"\] ?+" + alternation))
            # A Raspberry Pi firmware stamp ("MESS:00:00:05.383436:0: ") starts a message too:
            # its lines are all candidates.
            self.needles.append(_FIRMWARE_STAMP)
        if slow:
            self._scanners.append(re.compile("|".join(slow)))
        self._plain = [s for s in self._scanners if s not in self._special]
        # In one short line one search for any needle beats a Python loop over them (in a
        # whole text, str.find per needle is faster: see candidate_starts).
        self._any_needle = re.compile("|".join(map(re.escape, self.needles)) or "(?!)")

    def candidate(self, line: str) -> bool:
        """Whether one line (decoded as latin-1, without its newline) may match."""
        if line.endswith("\r"):
            line = line[:-1]  # the CR of a CRLF ending, as in a whole text
        text = "\n" + line
        if any(scanner.search(text) is not None for scanner in self._scanners):
            return True
        return self._any_needle.search(line) is not None

    def matchable(self, text: str) -> bool:
        """Whether a cleaned line (no escapes left) may match: `candidate` without the
        always-a-candidate rule for characters that cleaning changes, which lets a coloured
        or UTF-8 line that matches nothing skip the markers too."""
        text = "\n" + text
        if any(scanner.search(text) is not None for scanner in self._plain):
            return True
        return self._any_needle.search(text) is not None

    def candidate_starts(self, text: str, raw: bytes | None = None) -> list[int]:
        """Offsets where the candidate lines of a whole text (latin-1) start, ascending.

        `raw`: the bytes `text` was decoded from, when the caller has them (saves a copy)."""
        starts = set(_odd_lines(text.encode("latin-1") if raw is None else raw))
        text = "\n" + text
        for scanner in self._scanners[1:]:
            position = 0
            while (found := scanner.search(text, position)) is not None:
                at = found.start()
                starts.add(at if text[at] == "\n" else text.rfind("\n", 0, at))
                # Go on from the next line: a pattern may not cross into the next line.
                position = text.find("\n", at + 1)
                if position < 0:
                    break
        for literal in self.needles:
            at = text.find(literal)
            while at >= 0:
                starts.add(text.rfind("\n", 0, at))
                end = text.find("\n", at)
                at = text.find(literal, end) if end >= 0 else -1
        # `starts` holds the newline before each line; in the text without it, that is the
        # line's own start.
        return sorted(starts)


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
