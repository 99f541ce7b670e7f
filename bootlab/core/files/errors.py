"""Errors about a file the user wrote: they say which file, which line, and why."""

from __future__ import annotations

import re
import tomllib


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
