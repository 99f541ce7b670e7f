"""What a running session tells its front end: plain dataclasses, no UI library.

The port's thread (a live link, its board jobs) and the replay player post these through a
`Post` callable; the app wraps each in a Textual message (`ui.messages`), a headless driver just
collects them. A worker only posts; whoever receives them owns all state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bootlab.control.abrun import ABReport, BootStarting, LookJudged
from bootlab.core.advice.recommendation import Recommendation
from bootlab.core.analysis.phases import Boot, BootGap, Milestone
from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.tuneplan import TuneBaseline, TuneRanked, TuneStepDone, TuneStepStarted
from bootlab.core.capture.lines import Line


@dataclass(frozen=True)
class BootSnapshot:
    """The boot being received, copied so the UI thread never sees it change."""

    index: int
    first_line: int
    start_host_s: float | None
    milestones: tuple[Milestone, ...]
    gap: BootGap | None = None
    """Bytes of this boot were lost (the port went away while it was recorded)."""

    @staticmethod
    def of(boot: Boot) -> BootSnapshot:
        """A snapshot of a tracker's boot."""
        return BootSnapshot(boot.index, boot.first_line, boot.start_host_s,
                            tuple(boot.milestones), boot.gap)

    def boot(self) -> Boot:
        """A `Boot` again, for `phase_rows`."""
        return Boot(self.index, self.first_line, self.start_host_s,
                    milestones=list(self.milestones), gap=self.gap)


@dataclass
class Received:
    """What arrived since the last batch."""

    lines: list[Line]
    """Completed lines, in order."""
    partial: Line | None
    """The line still arriving (a prompt), or None."""
    boot: BootSnapshot | None
    """The current boot, or None before the first byte."""
    session: str | None = None
    """Live: the session file being written (it changes when a new boot starts)."""
    handled: bool = field(default=False, compare=False)
    """Set by the handler when done: until then the source holds back its next batch and
    merges what arrives into it, so a flood never queues batches in front of key presses."""


@dataclass
class PortOpened:
    """The live port is open and a session file is being written."""

    session: Path
    epoch_s: float
    """Wall-clock time of the session's time zero."""


@dataclass
class SourceFailed:
    """The port could not be opened or stopped working for good (or a replay failed);
    `text` says what to do."""

    text: str


@dataclass
class PlaceQuestion:
    """The port's thread asks whether to release a labgrid place this user already holds (a
    run that crashed); it waits for `answer` to be called with yes or no."""

    text: str
    answer: Callable[[bool], None]


@dataclass
class PlaceNote:
    """News of the labgrid place: acquired, released, reconnected, lost."""

    text: str


@dataclass
class RecordingFailed:
    """The session file cannot be written (a full disk, a read-only folder); the console goes
    on unrecorded. `text` says what the file holds and what to do."""

    text: str


@dataclass
class PortLost:
    """The port went away (unplugged, peer gone); the reader is reopening it."""

    reason: str


@dataclass
class PortBack:
    """The port is back after a gap."""

    gap_s: float


@dataclass
class ReplayEnded:
    """The replayed session has been played to its end."""



@dataclass
class ReplayRewound:
    """A seek went back: the replay starts again from the first byte (at once up to the
    target), so the panes start afresh."""





@dataclass
class Collected:
    """What the board told about a boot after its goal (its dmesg, `--collect`), joined to the
    boot as every command joins it (`analysis.collected`)."""

    session: str
    """The name of the session file the boot is in."""
    boot: Boot
    """The session's boot as analysed from its file: its milestones (those from dmesg have
    `source` "dmesg") and its `collected` note, joined or refused and why."""


@dataclass
class BaselineLoaded:
    """A baseline session was analysed (on a worker): its milestone times."""

    session: Path | None
    """The session (None: no baseline)."""
    times: dict[str, float]
    """Milestone id -> elapsed time of its first occurrence."""
    problem: str | None = None
    """Why the chosen baseline could not be used."""


Outcome = Literal["done", "failed", "cancelled"]
"""How a board job ended."""


@dataclass
class JobStarted:
    """A board job (reboot, apply and boot, A/B run) has taken the console."""

    title: str


@dataclass
class JobNote:
    """What a board job is doing now, in words (for the progress bar)."""

    title: str
    text: str
    tell: bool = False
    """Worth a notification too (what the engine says to the person at the bench)."""


@dataclass
class JobEnded:
    """A board job is over; the keyboard reaches the board again."""

    title: str
    outcome: Outcome
    text: str
    """The result, or what went wrong and what to do."""


@dataclass
class EnvRead:
    """The board's U-Boot environment, as `printenv` showed it."""

    env: dict[str, str]


@dataclass
class ArgSourceFound:
    """Where the board's kernel arguments come from, as a board job found it, and the file
    route that edits them (None: the environment carries them)."""

    source: ArgSource
    route: str | None


@dataclass
class SettingsApplied:
    """The pending settings were sent; `env` is the environment they lead to."""

    env: dict[str, str]
    persist: bool


@dataclass
class ABProgressed:
    """An A/B run's progress: the boot about to start, and the last one measured."""

    step: BootStarting
    last: str | None
    """The last boot's result in words, e.g. `base: login at 5.210 s`."""


@dataclass
class ABLooked:
    """An A/B run run until decided was judged after a round: its interval, narrowing."""

    look: LookJudged


@dataclass
class ABFinished:
    """An A/B run is complete: its statistics, and the prediction it was run to check."""

    report: ABReport
    recommendation: Recommendation | None = None


@dataclass
class TuneProgressed:
    """A tune's progress (post it to the tune screen): the baseline measured, the candidates
    ranked, a step started or decided (its step a copy, so the loop never changes it under
    the UI)."""

    event: TuneBaseline | TuneRanked | TuneStepStarted | TuneStepDone


@dataclass
class TuneEnded:
    """A tune stopped: why, its result in words, and where its report was written."""

    why: str
    result: tuple[str, ...] = ()
    report: Path | None = None
    """The HTML report (None: the tune did not finish; starting it again resumes it)."""


Event = (Received | PortOpened | SourceFailed | PlaceQuestion | PlaceNote | RecordingFailed
         | PortLost | PortBack | ReplayEnded | ReplayRewound | Collected | BaselineLoaded
         | JobStarted | JobNote | JobEnded | EnvRead | ArgSourceFound | SettingsApplied
         | ABProgressed | ABLooked | ABFinished | TuneProgressed | TuneEnded)
"""Everything a session posts."""
Post = Callable[[Event], object]
"""How a session hands an event to its front end; thread-safe (the app's `post_message` behind
a wrapper, or a headless collector)."""
