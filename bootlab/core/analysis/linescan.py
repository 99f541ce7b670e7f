"""Whole-text scans for "which lines could match?", the prefilter's first step.

A scan gets a whole text (many lines) and returns where the lines start in which some pattern
may match: a superset, each line then matched exactly. Two engines, same answers:

- `PythonScan`: Python's `re` and `str.find`, one pass per needle (few imports, little memory:
  the live recorder's reads are small);
- `Re2Scan`: every pattern loosened into one RE2 expression (`regex_parse.loosened`), one pass
  over the bytes whatever the number of patterns: what makes file analysis fast
  (bench/bench_analyze.py). Patterns RE2 cannot express stay with a `PythonScan`.

Both try patterns anchored at a message start only at a line start and after a stamp's `]`.
Python's scan also sorts the others into needles (literals some pattern cannot match without,
one `str.find` pass each) and slow patterns (searched as they are); RE2 takes them whole.
"""

from __future__ import annotations

import re
from typing import Any

from bootlab.core.analysis.regex_parse import NotForRe2, anchored, literal_first, literals, loosened

LONE_CR = r"\r(?!\n)"
"""A carriage return inside a line: the line redraws itself, always a candidate."""
_SPECIAL_CHARS = frozenset("\\.^$*+?{}[]|()")
_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


def split_flags(pattern: str) -> tuple[str, str]:
    """A pattern's leading global flags (`(?i)` -> "i") and the rest of it."""
    flags = _GLOBAL_FLAGS.match(pattern)
    return ("", pattern) if flags is None else (flags.group(1), pattern[flags.end():])


def unnamed(pattern: str) -> str:
    """Drop group names so several patterns can share one alternation."""
    return re.sub(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>", "(?:", pattern)


def body(pattern: str) -> str:
    """A pattern without its leading `^` and trailing `$`, as a scoped group."""
    flags, rest = split_flags(pattern)
    rest = rest[1:] if rest.startswith("^") else rest
    if rest.endswith("$") and not rest.endswith("\\$"):
        rest = rest[:-1]
    return f"(?{flags}:{unnamed(rest)})" if flags else f"(?:{unnamed(rest)})"


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
            others.append(body(pattern))
        else:
            groups.setdefault(head, []).append(rest[1:])
    alternatives = [re.escape(head) + "(?:" + "|".join(rests) + ")"
                    for head, rests in groups.items()]
    return "|".join(alternatives + others)


def needle(pattern: str) -> str | None:
    """The longest literal the pattern cannot match without, if one is long enough."""
    return max(literals(pattern), key=len, default=None)


FIRMWARE_STAMP = "MESS:"
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


class PythonScan:
    """The scan with Python's `re` and `str.find`."""

    def __init__(self, patterns: list[str]) -> None:
        at_start: list[str] = []
        found_by: list[list[str]] = []
        slow: list[str] = []
        for pattern in patterns:
            runs = literals(pattern)
            if anchored(pattern) and (literal_first(pattern) or not runs):
                at_start.append(pattern)
            elif not runs:
                slow.append(pattern)
            elif runs not in found_by:
                found_by.append(runs)
        self.needles = _needles(found_by)
        if at_start:
            # A Raspberry Pi firmware stamp ("MESS:00:00:05.383436:0: ") starts a message too:
            # its lines are all candidates.
            self.needles.append(FIRMWARE_STAMP)
        self.scanners = [re.compile(LONE_CR)]
        if at_start:
            # Two scans, each led by one literal character (the engine then skips to it fast;
            # one led by the class [\n\]] tests every character, three times slower): a
            # message starts a line, or follows a stamp's "]" and the one space the exact
            # stamp parser takes ("?+", possessive, tries the alternation once, not twice).
            alternation = "(?:" + _by_head(at_start) + ")"
            self.scanners.append(re.compile(r"\n" + alternation))
            self.scanners.append(re.compile(r"\] ?+" + alternation))
        if slow:
            self.scanners.append(re.compile("|".join(body(p) for p in slow)))

    def starts(self, text: str, raw: bytes) -> set[int]:
        """Offsets of the lines of `text` (latin-1; `raw` its bytes) that may match."""
        del raw  # str searches here
        starts: set[int] = set()
        text = "\n" + text
        for scanner in self.scanners:
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
        return starts


class Re2Scan:
    """The scan with one RE2 expression for every pattern it can express: each pattern whole
    (loosened), not a needle of it, so few lines that match nothing get past it."""

    def __init__(self, patterns: list[str]) -> None:
        import re2  # type: ignore[import-untyped]  # only file analysis needs it

        self._re2: Any = re2
        self._options = re2.Options()
        self._options.encoding = re2.Options.Encoding.LATIN1
        self._options.log_errors = False
        self._options.max_mem = RE2_MEMORY
        loose = {pattern: _loosened(pattern) for pattern in patterns}
        taken = [pattern for pattern in patterns if loose[pattern] is not None]
        regex = self._combined(taken, loose)
        if regex is None:  # rare: find the patterns that spoil it
            taken = [pattern for pattern in taken if self._fits(loose[pattern])]
            regex = self._combined(taken, loose)
        self._regex: Any = regex
        left = [pattern for pattern in patterns if pattern not in taken]
        self._rest = PythonScan(left) if left else None

    def _combined(self, patterns: list[str], loose: dict[str, bytes | None]) -> Any:
        """One expression for all `patterns`; None if RE2 refuses it, or if it matches an
        empty text (it would match everywhere)."""
        anchored_parts = [loose[p] or b"" for p in patterns if anchored(p)]
        parts = [b"\\r[^\\n]", b"\\r\\z"]  # LONE_CR without a lookahead
        parts += [loose[p] or b"" for p in patterns if not anchored(p)]
        if anchored_parts:
            # a message starts a line, follows a stamp's "]" (and the space the stamp parser
            # takes), or a Raspberry Pi firmware stamp: those lines are all candidates
            alternation = b"(?:" + b"|".join(anchored_parts) + b")"
            parts += [b"^" + alternation, b"\\] ?" + alternation, FIRMWARE_STAMP.encode()]
        try:
            regex = self._re2.compile(b"(?m)" + b"|".join(parts), self._options)
        except self._re2.error:
            return None
        return regex if regex.search(b"") is None else None

    def _fits(self, loose: bytes | None) -> bool:
        """Whether one loosened pattern is RE2's and matches no empty text (a pattern that
        does is left to Python's scan, which tries it only where a message starts)."""
        try:
            return self._re2.compile(loose, self._options).search(b"") is None
        except self._re2.error:
            return False

    def starts(self, text: str, raw: bytes) -> set[int]:
        """Offsets of the lines of `text` (latin-1; `raw` its bytes) that may match."""
        starts = set() if self._rest is None else self._rest.starts(text, raw)
        # No match crosses a line's end (`loosened`), so each is in the line it starts in.
        line_start = raw.rfind
        for found in self._regex.finditer(raw):
            starts.add(line_start(b"\n", 0, found.start()) + 1)
        return starts


RE2_MEMORY = 32 << 20
"""RE2's memory budget: the built-in profiles run as a DFA from 16 MB (with 8, RE2 falls back
to its NFA, 60x slower); what a scan uses is ~3 MB of program and ~3 MB of DFA states."""


def _loosened(pattern: str) -> bytes | None:
    try:
        return loosened(pattern)
    except (NotForRe2, re.error):
        return None
