"""Messages from the source workers (replay or live port) to the main screen.

Workers run on their own threads and only post these; the screen's handlers own all state.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from bootlab.core.lines import Line
from bootlab.core.phases import Boot, Milestone
from bootlab.core.settings import BoardFacts


@dataclass(frozen=True)
class BootSnapshot:
    """The boot being received, copied so the UI thread never sees it change."""

    index: int
    first_line: int
    start_host_s: float | None
    milestones: tuple[Milestone, ...]

    @staticmethod
    def of(boot: Boot) -> BootSnapshot:
        """A snapshot of a tracker's boot."""
        return BootSnapshot(boot.index, boot.first_line, boot.start_host_s,
                            tuple(boot.milestones))

    def boot(self) -> Boot:
        """A `Boot` again, for `phase_rows`."""
        return Boot(self.index, self.first_line, self.start_host_s,
                    milestones=list(self.milestones))


@dataclass
class Received(Message, bubble=False):
    """What arrived since the last batch."""

    lines: list[Line]
    """Completed lines, in order."""
    partial: Line | None
    """The line still arriving (a prompt), or None."""
    boot: BootSnapshot | None
    """The current boot, or None before the first byte."""
    session: str | None = None
    """Live: the session file being written (it changes when a new boot starts)."""


@dataclass
class PortOpened(Message, bubble=False):
    """The live port is open and a session file is being written."""

    session: Path
    epoch_s: float
    """Wall-clock time of the session's time zero."""


@dataclass
class SourceFailed(Message, bubble=False):
    """The port could not be opened or stopped working for good (or a replay failed);
    `text` says what to do."""

    text: str


@dataclass
class PortLost(Message, bubble=False):
    """The port went away (unplugged, peer gone); the reader is reopening it."""

    reason: str


@dataclass
class PortBack(Message, bubble=False):
    """The port is back after a gap."""

    gap_s: float


@dataclass
class ReplayEnded(Message, bubble=False):
    """The replayed session has been played to its end."""


@dataclass
class FactsLearned(Message, bubble=False):
    """What the log so far tells about the board (for the settings panel)."""

    facts: BoardFacts
