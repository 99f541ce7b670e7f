"""Errors about a file the user wrote: they say which file, which line, and why."""

from __future__ import annotations


class LocatedError(ValueError):
    """Something in a file could not be used; the message reads `file:line: reason`."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {reason}")
        self.source = source
        self.line = line
        self.reason = reason
