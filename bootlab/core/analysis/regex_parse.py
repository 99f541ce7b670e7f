"""What a regular expression is made of, read with CPython's own parser (`re._parser`).

The one module that touches the `re` module's internals (a private API that may change between
Python versions: tests/test_import_hygiene.py keeps every other module off it). Two users need
a pattern's structure:

- the patterns of a user's files (profiles, settings, goals) are checked before they run on
  board output: `user_pattern` refuses the forms that backtrack exponentially;
- the prefilter finds what a pattern cannot match without: whether it is anchored at the start
  (`anchored`), starts with a literal character (`literal_first`), and its literal runs
  (`literals`).
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

_parser: Any = importlib.import_module("re._parser")
"""The stdlib's regular expression parser."""
_constants: Any = importlib.import_module("re._constants")
"""Its opcodes (LITERAL, AT, AT_BEGINNING ...)."""
MIN_LITERAL = 3
"""Literal runs shorter than this are not worth searching for."""


@functools.lru_cache(maxsize=8)
def _parsed(pattern: str) -> Any:
    """A pattern's parse tree (read, never changed): the prefilter asks `anchored`,
    `literal_first` and `literals` about each pattern in turn. A few trees only: a profile's
    would hold ~0.5 MB for the life of a recording."""
    return _parser.parse(pattern)


def anchored(pattern: str) -> bool:
    """Whether the whole pattern is anchored at the start (`^a|b` is not)."""
    try:
        parsed = _parsed(pattern)
    except re.error:
        return False
    return len(parsed) > 0 and parsed[0] == (_constants.AT, _constants.AT_BEGINNING)


def literal_first(pattern: str) -> bool:
    """Whether an anchored pattern's message starts with a case-sensitive literal character.

    The regex engine skips such an alternative after one comparison; any other alternative
    (`\\s*...`, `\\S{1,64} login:`) is run at every message start, so it is better found by
    its needle.
    """
    try:
        parsed = _parsed(pattern)
    except re.error:
        return False
    items = list(parsed)[1:]  # after the AT_BEGINNING
    return (not parsed.state.flags & re.IGNORECASE and len(items) > 0
            and items[0][0] is _constants.LITERAL)


def literals(pattern: str) -> list[str]:
    """The literal runs the pattern cannot match without (its top level), long enough to find."""
    try:
        parsed = _parsed(pattern)
    except re.error:
        return []
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return []
    runs, run = [], []
    for op, value in parsed:
        if op is _constants.LITERAL:
            run.append(chr(value))
            continue
        runs.append("".join(run))
        run = []
    runs.append("".join(run))
    return [r for r in runs if len(r) >= MIN_LITERAL]


_WIDE_REPEAT = 32
"""A repetition allowing this many or more is treated as unbounded."""
_ALPHABET = [chr(c) for c in range(256)]
_CATEGORIES = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
               "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}
Chars = frozenset[str]
_CATEGORY_CHARS = {name: frozenset(ch for ch in _ALPHABET if re.match(pattern, ch))
                   for name, pattern in _CATEGORIES.items()}


def user_pattern(raw: str) -> re.Pattern[str]:
    """Compile a pattern from a user's file, refusing the forms that backtrack exponentially:
    an unbounded repetition inside another with nothing mandatory between the inner ones that
    they cannot match themselves, such as `(a+)+`, `(\\w+\\s?)*` or `(.+,)*` (`(\\d+\\.)+`
    is fine). On a line that almost matches such a pattern runs for minutes, and board output
    decides the lines. A heuristic for the common forms, not a proof.

    Raises:
        re.error: the pattern is invalid, or has such a repetition.
    """
    compiled = re.compile(raw)
    parsed = _parser.parse(raw)
    if _risky(parsed, bool(parsed.state.flags & re.IGNORECASE)):
        raise re.error("a repetition inside a repetition with nothing that separates the inner "
                       "ones (like (a+)+ or (\\w+\\s?)*) can take exponential time on a device "
                       "line; repeat only one of them, separate them by a character the inner "
                       "one cannot match, or make it atomic: (?>a+)+")
    return compiled


def _risky(items: Any, nocase: bool) -> bool:
    """Whether a parsed pattern repeats, unbounded, a body that can split a text many ways."""
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            _, high, body = arg
            wide = high == _parser.MAXREPEAT or high >= _WIDE_REPEAT
            if (wide and _ambiguous(body, nocase)) or _risky(body, nocase):
                return True
        elif any(_risky(part, nocase) for part in _parts(name, arg)):
            return True
    return False


_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


def _ambiguous(body: Any, nocase: bool) -> bool:
    """Whether a repeated body holds an unbounded repetition whose end is not fixed: the next
    mandatory thing after it (wrapping round to the next time round the body) shares
    characters with it, as does anything optional in between."""
    elements: list[tuple[Chars | None, bool, bool]] = []  # characters, unbounded, mandatory
    for op, arg in _flat(body):
        name = str(op)
        if name in _ZERO_WIDTH:
            continue
        if name == "ATOMIC_GROUP":  # never backtracked into: it fixes where things end
            elements.append((frozenset(), False, True))
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, sub = arg
            wide = high == _parser.MAXREPEAT or high >= _WIDE_REPEAT
            elements.append((_chars(list(sub), nocase), wide, low > 0))
        elif name == "BRANCH":
            elements.append(_branch(arg[1], nocase))
        else:
            wide = any(_repeats(part) for part in _parts(name, arg))
            elements.append((None if wide else _chars([(op, arg)], nocase), wide, True))
    count = len(elements)
    for index, (chars, wide, _) in enumerate(elements):
        if not wide:
            continue
        if chars is None:
            return True  # an unbounded repetition of something longer: assume the worst
        for step in range(1, count + 1):
            after, _, mandatory = elements[(index + step) % count]
            if after is None or after & chars:
                return True
            if mandatory:
                break
    return False


def _branch(alternatives: list[Any], nocase: bool) -> tuple[Chars | None, bool, bool]:
    """A branch as an element of a repeated body: (characters, unbounded, mandatory).

    Alternatives that can start alike, or an empty one, let a repetition split a text in
    several ways (`(a|aa)+`): such a branch counts as an unbounded repetition of every
    character in it; one holding a repetition, as one of unknown characters."""
    if any(_repeats(alternative) for alternative in alternatives):
        return None, True, True
    starts: list[Chars] = []
    every: set[str] = set()
    for alternative in alternatives:
        items = [item for item in alternative if str(item[0]) not in _ZERO_WIDTH]
        sets = [_chars([item], nocase) for item in items]
        if any(chars is None for chars in sets):
            return None, True, True
        every.update(*(chars for chars in sets if chars is not None))
        if sets and sets[0] is not None:
            starts.append(sets[0])
    empty = len(starts) < len(alternatives)
    overlap = any(a & b for i, a in enumerate(starts) for b in starts[i + 1:])
    return frozenset(every), empty or overlap, not empty


def _flat(items: Any) -> list[Any]:
    """The items of a sequence, with plain groups opened up."""
    out: list[Any] = []
    for op, arg in items:
        out += _flat(arg[3]) if str(op) == "SUBPATTERN" else [(op, arg)]
    return out


def _repeats(items: Any) -> bool:
    """Whether a parsed pattern holds an unbounded repetition anywhere."""
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT") and (arg[1] == _parser.MAXREPEAT
                                                     or arg[1] >= _WIDE_REPEAT):
            return True
        if any(_repeats(part) for part in _parts(name, arg)) or (
                name in ("MAX_REPEAT", "MIN_REPEAT") and _repeats(arg[2])):
            return True
    return False


def _chars(items: list[Any], nocase: bool) -> Chars | None:
    """The characters (of the first 256) one single-character item matches; None otherwise."""
    if len(items) != 1:
        return None
    op, arg = items[0]
    name = str(op)
    if name == "LITERAL":
        found = {chr(arg)}
    elif name == "NOT_LITERAL":
        found = {ch for ch in _ALPHABET if ch != chr(arg)}
    elif name == "ANY":
        found = set(_ALPHABET) - {"\n"}
    elif name == "CATEGORY" and str(arg) in _CATEGORIES:
        found = set(_CATEGORY_CHARS[str(arg)])
    elif name == "IN":
        found = _set_members(arg)
    else:
        return None
    if nocase:
        found |= {ch.swapcase() for ch in found}
    return frozenset(found)


def _set_members(members: Any) -> set[str]:
    found: set[str] = set()
    negate = False
    for op, arg in members:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            found.add(chr(arg))
        elif name == "RANGE":
            found |= {chr(c) for c in range(arg[0], min(arg[1], 255) + 1)}
        elif name == "CATEGORY" and str(arg) in _CATEGORIES:
            found |= _CATEGORY_CHARS[str(arg)]
        else:
            found |= set(_ALPHABET)  # unknown member: assume it overlaps everything
    return set(_ALPHABET) - found if negate else found


def _parts(name: str, arg: Any) -> list[Any]:
    """The sub-patterns of a parsed group, branch, lookaround or conditional."""
    if name == "SUBPATTERN":
        return [arg[3]]
    if name == "ATOMIC_GROUP":
        return [arg]
    if name == "BRANCH":
        return list(arg[1])
    if name in ("ASSERT", "ASSERT_NOT"):
        return [arg[1]]
    if name == "GROUPREF_EXISTS":
        return [part for part in arg[1:] if part is not None]
    return []


RE2_REPEAT = 1000
"""RE2's largest counted repetition."""


class NotForRe2(ValueError):
    """A pattern holds something RE2 cannot express even loosened (a character past 0xff)."""


def loosened(pattern: str) -> bytes:
    """The pattern in RE2's syntax, for RE2's Latin-1 mode, loosened so it matches wherever
    the pattern matches in a line of ASCII text (and maybe elsewhere): lookarounds, anchors
    and backreference checks are dropped, possessive and atomic forms made plain, counts past
    RE2's limit left open; character classes keep Python's members among the first 256 but
    a newline, so no match runs from one line into the next (markers read one line).

    The whole-text scan (`linescan`) runs it to find candidate lines fast; the exact pattern
    then decides.

    Raises:
        NotForRe2: the pattern needs a character RE2's Latin-1 mode cannot hold.
        re.error: the pattern is invalid.
    """
    parsed = _parsed(pattern)
    body = _re2_items(parsed)
    return (f"(?i:{body})" if parsed.state.flags & re.IGNORECASE else body).encode("latin-1")


_NEVER = "[^\\x00-\\xff]"
"""A class of no character: what a newline in a pattern matches within one line."""


def _re2_char(code: int) -> str:
    if code == 0x0A:
        return _NEVER
    if code > 0xFF:
        raise NotForRe2(f"character U+{code:04X}")
    char = chr(code)
    return char if char.isascii() and char.isalnum() else f"\\x{code:02x}"


def _re2_class(chars: set[str]) -> str:
    """A character class of exactly these characters (of the first 256) but a newline."""
    codes = sorted(ord(c) for c in chars if c != "\n")
    if not codes:
        return _NEVER
    ranges: list[tuple[int, int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return "[" + "".join(_re2_char(lo) if lo == hi else f"{_re2_char(lo)}-{_re2_char(hi)}"
                         for lo, hi in ranges) + "]"


_RE2_FLAGS = ((re.IGNORECASE, "i"),)


def _re2_items(items: Any) -> str:
    return "".join(_re2_item(str(op), arg) for op, arg in items)


def _re2_item(name: str, arg: Any) -> str:
    if name == "LITERAL":
        return _re2_char(arg)
    if name in ("NOT_LITERAL", "ANY", "IN") or (name == "CATEGORY" and str(arg) in _CATEGORIES):
        chars = _chars([(getattr(_constants, name), arg)], False)
        assert chars is not None
        # ANY keeps its "not a newline"; others as Python has them
        return _re2_class(set(chars)) if name != "ANY" else "[^\\n]"
    if name == "BRANCH":
        return "(?:" + "|".join(_re2_items(part) for part in arg[1]) + ")"
    if name == "SUBPATTERN":
        _, added, removed, sub = arg
        on = "".join(letter for flag, letter in _RE2_FLAGS if added & flag)
        off = "".join(letter for flag, letter in _RE2_FLAGS if removed & flag)
        return f"(?{on}{'-' + off if off else ''}:{_re2_items(sub)})"
    if name == "ATOMIC_GROUP":
        return f"(?:{_re2_items(arg)})"
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, sub = arg
        low = min(low, RE2_REPEAT)
        upper = "" if high == _parser.MAXREPEAT or high > RE2_REPEAT else str(high)
        lazy = "?" if name == "MIN_REPEAT" else ""
        return f"(?:{_re2_items(sub)}){{{low},{upper}}}{lazy}"
    if name == "AT":
        kind = str(arg)
        return {"AT_BOUNDARY": "\\b", "AT_NON_BOUNDARY": "\\B"}.get(kind, "")
    if name in ("ASSERT", "ASSERT_NOT"):
        return ""
    if name == "GROUPREF":
        return "[^\\n]*?"
    if name == "GROUPREF_EXISTS":
        _, yes, no = arg
        return f"(?:{_re2_items(yes)}|{_re2_items(no) if no is not None else ''})"
    raise NotForRe2(f"regular expression part {name}")
