"""The last boot of a log, read once: its lines (as shown and as first printed) and milestones.

What a board's settings were is read from one boot: its facts (`board.facts.facts_from_log`) and
the evidence for each setting's state (`evidence`). Both need every line of the boot, not only
the milestones' lines: the kernel command line, the printk stamps, the lines that are missing.
A countdown that backspaces over itself (`Hit any key to stop autoboot:  2 \\b\\b\\b 1 ...`)
is drawn as its last number, so the text as first printed is kept too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bootlab.core.analysis.phases import Milestone, ParsedLine
from bootlab.core.analysis.pipeline import analyze, parse_line
from bootlab.core.analysis.profiles import Profile, load_profile


@dataclass(frozen=True)
class BootLog:
    """The lines and milestones of one boot."""

    lines: tuple[ParsedLine, ...] = ()
    """Every line of the boot, cleaned; `number` counts from the log's first line."""
    raw: tuple[bytes, ...] = ()
    """The same lines' bytes (backspaces and carriage returns not yet drawn)."""
    milestones: tuple[Milestone, ...] = ()
    console: bool = True
    """The log is what a console showed. dmesg output is not: it holds every message whatever
    the console's loglevel, with times dmesg prints itself."""

    def line(self, number: int) -> ParsedLine | None:
        """The line with this number, if the boot has it."""
        index = number - self.lines[0].number if self.lines else -1
        return self.lines[index] if 0 <= index < len(self.lines) else None

    def first_printed(self, number: int) -> str:
        """A line's message as it was first printed, before backspaces or carriage returns
        wrote over it (the countdown's first number)."""
        found = self.line(number)
        if found is None:
            return ""
        raw = self.raw[number - self.lines[0].number].strip(b"\r").lstrip(b"\b")
        cuts = [i for i in (raw.find(b"\b"), raw.find(b"\r")) if i >= 0]
        return parse_line(number, raw[:min(cuts)] if cuts else raw, None).message


def read_boot(log: bytes | str | Sequence[str] | Sequence[bytes],
              profile: Profile | None = None, *, first_line: int = 1,
              console: bool = True) -> BootLog:
    """The last boot of a log.

    Args:
        log: the console bytes, or their text, or its lines (bytes or text).
        profile: the milestones to find (default: the built-in linux profile).
        first_line: the number of the log's first line in a longer stream (the app passes the
            lines of the current boot), so line numbers match the console's.
        console: False for dmesg output (see `BootLog.console`).
    """
    if isinstance(log, bytes | str):
        data = log if isinstance(log, bytes) else log.encode("utf-8", "replace")
    else:
        data = b"\n".join(line if isinstance(line, bytes) else line.encode("utf-8", "replace")
                          for line in log)
    analysis = analyze(data, profile or load_profile("linux"))
    if not analysis.boots:
        return BootLog(console=console)
    boot = analysis.boots[-1]
    raw = tuple(data.split(b"\n")[boot.first_line - 1:])
    if raw and not raw[-1]:
        raw = raw[:-1]
    shift = first_line - 1
    lines = tuple(parse_line(boot.first_line + shift + i, line, None)
                  for i, line in enumerate(raw))
    milestones = tuple(replace(m, line=m.line + shift) for m in boot.milestones)
    return BootLog(lines, raw, milestones, console)
