"""Messages on the app's thread: the session's events wrapped for Textual, and what screens
tell each other.

The session (`bootlab.session`) posts plain dataclasses from its threads; `poster` wraps each in
the message of the same name here, so a screen handles it as `on_received` and so on and reads
the event as `message.event`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message
from textual.message_pump import MessagePump

from bootlab.core.analysis.goals import Goal
from bootlab.core.board.evidence import Found
from bootlab.core.board.facts import BoardFacts
from bootlab.session import events
from bootlab.session.events import Event, Post


class SessionMessage(Message, bubble=False):
    """A session event, delivered to a screen."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class Received(SessionMessage, bubble=False):
    """`events.Received` on the UI thread."""

    event: events.Received


class PortOpened(SessionMessage, bubble=False):
    """`events.PortOpened` on the UI thread."""

    event: events.PortOpened


class SourceFailed(SessionMessage, bubble=False):
    """`events.SourceFailed` on the UI thread."""

    event: events.SourceFailed


class PlaceQuestion(SessionMessage, bubble=False):
    """`events.PlaceQuestion` on the UI thread."""

    event: events.PlaceQuestion


class PlaceNote(SessionMessage, bubble=False):
    """`events.PlaceNote` on the UI thread."""

    event: events.PlaceNote


class RecordingFailed(SessionMessage, bubble=False):
    """`events.RecordingFailed` on the UI thread."""

    event: events.RecordingFailed


class PortLost(SessionMessage, bubble=False):
    """`events.PortLost` on the UI thread."""

    event: events.PortLost


class PortBack(SessionMessage, bubble=False):
    """`events.PortBack` on the UI thread."""

    event: events.PortBack


class ReplayEnded(SessionMessage, bubble=False):
    """`events.ReplayEnded` on the UI thread."""

    event: events.ReplayEnded


class ReplayRewound(SessionMessage, bubble=False):
    """`events.ReplayRewound` on the UI thread."""

    event: events.ReplayRewound


class Collected(SessionMessage, bubble=False):
    """`events.Collected` on the UI thread."""

    event: events.Collected


class BaselineLoaded(SessionMessage, bubble=False):
    """`events.BaselineLoaded` on the UI thread."""

    event: events.BaselineLoaded


class JobStarted(SessionMessage, bubble=False):
    """`events.JobStarted` on the UI thread."""

    event: events.JobStarted


class JobNote(SessionMessage, bubble=False):
    """`events.JobNote` on the UI thread."""

    event: events.JobNote


class JobEnded(SessionMessage, bubble=False):
    """`events.JobEnded` on the UI thread."""

    event: events.JobEnded


class EnvRead(SessionMessage, bubble=False):
    """`events.EnvRead` on the UI thread."""

    event: events.EnvRead


class ArgSourceFound(SessionMessage, bubble=False):
    """`events.ArgSourceFound` on the UI thread."""

    event: events.ArgSourceFound


class SettingsApplied(SessionMessage, bubble=False):
    """`events.SettingsApplied` on the UI thread."""

    event: events.SettingsApplied


class ABProgressed(SessionMessage, bubble=False):
    """`events.ABProgressed` on the UI thread."""

    event: events.ABProgressed


class ABLooked(SessionMessage, bubble=False):
    """`events.ABLooked` on the UI thread."""

    event: events.ABLooked


class ABFinished(SessionMessage, bubble=False):
    """`events.ABFinished` on the UI thread."""

    event: events.ABFinished


class TuneProgressed(SessionMessage, bubble=False):
    """`events.TuneProgressed` on the UI thread."""

    event: events.TuneProgressed


class TuneEnded(SessionMessage, bubble=False):
    """`events.TuneEnded` on the UI thread."""

    event: events.TuneEnded


WRAPPERS: dict[type, type[SessionMessage]] = {
    getattr(events, wrapper.__name__): wrapper for wrapper in SessionMessage.__subclasses__()}
"""Event class -> the message that carries it (same name)."""


def poster(pump: MessagePump) -> Post:
    """A `Post` that delivers each event to `pump` (thread-safe, as `post_message` is)."""
    def post(event: Event) -> None:
        pump.post_message(WRAPPERS[type(event)](event))
    return post


@dataclass
class FactsLearned(Message, bubble=False):
    """What the log so far tells about the board (for the settings panel)."""

    facts: BoardFacts
    found: Found
    """What the boot and the session show about each setting (`evidence.read_evidence`)."""


@dataclass
class BaselineChanged(Message, bubble=False):
    """The baseline session was chosen (or, with None, cleared) and remembered; post it to the
    main screen, which loads it and compares each boot with it."""

    session: Path | None


@dataclass
class GoalChanged(Message, bubble=False):
    """Another goal was chosen for the boots; post it to the main screen, which measures to it
    from now on (phase pane, status line, the live port's sessions and board jobs)."""

    goal: Goal
