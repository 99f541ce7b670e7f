"""Errors about a file the user wrote: they say which file, which line, and why."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection, Mapping, Sequence


class LocatedError(ValueError):
    """Something in a file could not be used; the message reads `file:line: reason`."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {reason}")
        self.source = source
        self.line = line
        self.reason = reason


def line_of(text: str, needle: str, start: int = 1) -> int | None:
    """1-based line where `needle` first appears in `text` at or after line `start`."""
    lines = text.splitlines()
    for number in range(start, len(lines) + 1):
        if needle in lines[number - 1]:
            return number
    return None


def toml_error_line(error: tomllib.TOMLDecodeError) -> int | None:
    """The line a TOML syntax error points at."""
    found = re.search(r"line (\d+)", str(error))
    return int(found.group(1)) if found else None


_PART = r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)"""
_DOTTED = rf"{_PART}(?:[ \t]*\.[ \t]*{_PART})*"
_HEADER = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_DOTTED})[ \t]*\]")
_ASSIGN = re.compile(rf"[ \t]*({_DOTTED})[ \t]*=")


def _names(dotted: str) -> list[str]:
    """The names of a dotted TOML key, quotes removed."""
    return [tomllib.loads(f"k = {part}")["k"] if part[0] in "\"'" else part
            for part in re.findall(_PART, dotted)]


def toml_line(text: str, path: Sequence[str | int]) -> int | None:
    """1-based line where the TOML value at `path` is written: its `key = ...` line, or the
    header of the table it is, or the line of an inline table holding it; else the header of
    the nearest table around it that is written.

    `path` holds key names and, after an array of tables, the entry's index: ("milestone", 2,
    "fallback", "after") is `after` in the third [[milestone]]'s [milestone.fallback]. Lines
    inside multi-line strings are skipped; the text is valid TOML."""
    target = tuple(path)
    current: tuple[str | int, ...] = ()
    counts: dict[tuple[str | int, ...], int] = {}
    nearest = None
    in_string = False
    for number, line in enumerate(text.splitlines(), 1):
        quotes = line.count('"""') + line.count("'''")
        if in_string:
            in_string = quotes % 2 == 0
            continue
        in_string = quotes % 2 == 1
        header = _HEADER.match(line)
        if header is not None:
            current = ()
            for name in _names(header.group(2)):
                current = (*current, name)
                if current in counts:
                    current = (*current, counts[current])
            if header.group(1) == "[[":
                array = current[:-1] if isinstance(current[-1], int) else current
                counts[array] = counts.get(array, -1) + 1
                current = (*array, counts[array])
            if target[:len(current)] == current:
                if len(current) == len(target):
                    return number
                nearest = number
            continue
        assign = _ASSIGN.match(line)
        if assign is not None:
            written = (*current, *_names(assign.group(1)))
            shorter = min(len(written), len(target))
            if written[:shorter] == target[:shorter]:
                return number
    return nearest


def unknown_key(table: Mapping[str, object], allowed: Collection[str]) -> str | None:
    """The first key of `table` that is not in `allowed`, or None."""
    return next((key for key in table if key not in allowed), None)
