"""A fast, conservative test for "could this line match any marker?".

Almost every line of a boot log matches no marker, so analysis speed is the speed of rejecting
lines. Trying a hundred regular expressions on each line in Python is far too slow; instead:

- patterns anchored at the message start (`^...`) become one alternation that is tried only
  where a message can start: after a newline, or after the `]` of a printk or bootloader
  stamp. The regex engine skips every other position with a one-character test, and skips an
  alternative whose first character differs at almost no cost;
- the other patterns contribute a literal they cannot match without (found by parsing the
  pattern), searched with `str.find`; a pattern with no such literal is searched as it is;
- lines with anything cleaning would change (escapes, NUL, CR inside the line, bytes >= 0x80)
  are always candidates.

The answer is a superset: a candidate line is then matched exactly (`MarkerSet.match`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Each scanner starts with a single character class or literal, so the regex engine can skip
# to the positions where it may match without trying the pattern anywhere else.
_SPECIAL = (r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\xff]", r"\r(?!\n)")
_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")
_MIN_NEEDLE = 3


def _split_flags(pattern: str) -> tuple[str, str]:
    flags = _GLOBAL_FLAGS.match(pattern)
    return ("", pattern) if flags is None else (flags.group(1), pattern[flags.end():])


def unnamed(pattern: str) -> str:
    """Drop group names so several patterns can share one alternation."""
    return re.sub(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>", "(?:", pattern)


def _body(pattern: str) -> str:
    """A pattern without its leading `^` and trailing `$`, as a scoped group."""
    flags, rest = _split_flags(pattern)
    rest = rest[1:] if rest.startswith("^") else rest
    if rest.endswith("$") and not rest.endswith("\\$"):
        rest = rest[:-1]
    return f"(?{flags}:{unnamed(rest)})" if flags else f"(?:{unnamed(rest)})"


def _anchored(pattern: str) -> bool:
    """Whether the whole pattern is anchored at the start (`^a|b` is not)."""
    from re import _constants, _parser  # type: ignore[attr-defined]

    try:
        parsed = _parser.parse(pattern)
    except re.error:
        return False
    return len(parsed) > 0 and parsed[0] == (_constants.AT, _constants.AT_BEGINNING)


def _literal_first(pattern: str) -> bool:
    """Whether an anchored pattern's message starts with a case-sensitive literal character.

    The regex engine skips such an alternative after one comparison; any other alternative
    (`\\s*...`, `\\S{1,64} login:`) is run at every message start, so it is better found by
    its needle.
    """
    from re import _constants, _parser  # type: ignore[attr-defined]

    try:
        parsed = _parser.parse(pattern)
    except re.error:
        return False
    items = list(parsed)[1:]  # after the AT_BEGINNING
    return (not parsed.state.flags & re.IGNORECASE and len(items) > 0
            and items[0][0] is _constants.LITERAL)


def needle(pattern: str) -> str | None:
    """The longest literal the pattern cannot match without, if one is long enough."""
    from re import _constants, _parser  # type: ignore[attr-defined]

    try:
        parsed = _parser.parse(pattern)
    except re.error:
        return None
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    best, run = "", []
    for op, value in parsed:
        if op is _constants.LITERAL:
            run.append(chr(value))
            continue
        best = max(best, "".join(run), key=len)
        run = []
    best = max(best, "".join(run), key=len)
    return best if len(best) >= _MIN_NEEDLE else None


class Prefilter:
    """Rejects lines that no pattern can match (see the module docstring)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        anchored: list[str] = []
        self.needles: list[str] = []
        slow: list[str] = []
        for pattern in patterns:
            literal = needle(pattern)
            if _anchored(pattern) and (_literal_first(pattern) or literal is None):
                anchored.append(_body(pattern))
                continue
            if literal is None:
                slow.append(_body(pattern))
            elif literal not in self.needles:
                self.needles.append(literal)
        # A needle holding another needle finds nothing the shorter one would not.
        self.needles = [n for n in self.needles
                        if not any(other != n and other in n for other in self.needles)]
        self._special = [re.compile(p) for p in _SPECIAL]
        self._scanners = list(self._special)
        if anchored:
            # "?+" is possessive: after a stamp's "] " the message starts after one space, as
            # the exact stamp parser has it, and the alternation is tried once, not twice.
            self._scanners.append(re.compile(r"(?:\n|\] ?+)(?:" + "|".join(anchored) + ")"))
        if slow:
            self._scanners.append(re.compile("|".join(slow)))

    def candidate(self, line: str) -> bool:
        """Whether one line (decoded as latin-1, without its newline) may match."""
        if line.endswith("\r"):
            line = line[:-1]  # the CR of a CRLF ending, as in a whole text
        text = "\n" + line
        if any(scanner.search(text) is not None for scanner in self._scanners):
            return True
        return any(n in line for n in self.needles)

    def matchable(self, text: str) -> bool:
        """Whether a cleaned line (no escapes left) may match: `candidate` without the
        always-a-candidate rule for characters that cleaning changes, which lets a coloured
        or UTF-8 line that matches nothing skip the markers too."""
        text = "\n" + text
        if any(scanner.search(text) is not None for scanner in self._scanners
               if scanner not in self._special):
            return True
        return any(n in text for n in self.needles)

    def candidate_starts(self, text: str) -> list[int]:
        """Offsets where the candidate lines of a whole text (latin-1) start, ascending."""
        text = "\n" + text
        starts: set[int] = set()
        for scanner in self._scanners:
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
