"""What a front end reads from: a source run on its own thread and the batcher it posts through.

A source (a replayed session or a live port) runs on a worker thread, feeds a `Capture` and
hands its output to a `Batcher`, which posts one `Received` event at most every `BATCH_S`:
however fast lines arrive, the UI handles a few dozen events a second, never one per line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from bootlab.core.analysis.phases import Boot
from bootlab.core.analysis.pipeline import Capture
from bootlab.core.capture.lines import Line
from bootlab.session.events import BootSnapshot, Post, Received

BATCH_S = 1 / 30
"""Shortest time between two batches."""
HOLD_S = 1.0
"""A batch the UI has not handled yet holds back the next one at most this long (a handler
that never marks batches handled then still gets one a second)."""
HEARTBEAT_S = 0.25
"""A batch goes out this often even when nothing arrived (and a replay checks its controls)."""



class Source(Protocol):
    """A stream of console bytes run on a worker thread."""

    live: bool
    """A real port (typed keys go to it), not a replay."""
    name: str
    """What the status line shows: the port, or `replay: FILE`."""
    baud: int | None
    meta: dict[str, object]
    """Label, board and the rest of the session header."""

    def run(self, post: Post, cancelled: Callable[[], bool]) -> None:
        """Read until the end, `cancelled()` or `stop()`, posting messages."""

    def clock_s(self) -> float | None:
        """Source time now, seconds since the session start (None: not started)."""

    def stop(self) -> None:
        """Ask `run` to end soon (from any thread)."""


class Shift(Protocol):
    """Places a capture's lines and boots in a longer stream (see `session.live`)."""

    def line(self, line: Line) -> Line:
        """The line with its stream number and time."""

    def boot(self, boot: Boot) -> Boot:
        """The boot with its stream index, lines and times."""


class Batcher:
    """Collects a capture's output on the worker thread; posts it in batches."""

    def __init__(self, post: Post, interval_s: float = BATCH_S,
                 shift: Shift | None = None) -> None:
        self.post = post
        self.interval_s = interval_s
        self.shift = shift
        """Applied to the partial line and the boot posted (added lines come shifted)."""
        self._lines: list[Line] = []
        self._last_post = 0.0
        self._partial_size = -1
        self._milestones = -1
        self._unhandled: Received | None = None

    def add(self, lines: list[Line]) -> None:
        """Lines completed by the last read."""
        self._lines += lines

    def add_line(self, line: Line) -> None:
        """One completed line (a `Recorder.on_line` callback)."""
        self._lines.append(line)

    def maybe_post(self, capture: Capture, session: str | None = None) -> None:
        """Post a batch if the interval has passed and there is news (or a heartbeat is due)."""
        now = time.monotonic()
        waited = now - self._last_post
        if waited < self.interval_s:
            return
        if self._unhandled is not None and not self._unhandled.handled and waited < HOLD_S:
            return  # the UI is behind: what arrives joins the next batch
        if waited < HEARTBEAT_S and not self._lines and not self._changed(capture):
            return
        self.post_now(capture, session)

    def post_now(self, capture: Capture, session: str | None = None) -> None:
        """Post what has been collected (and the current partial line and boot) now."""
        partial = capture.framer.partial
        boot = capture.boots[-1] if capture.boots else None
        if self.shift is not None:
            partial = self.shift.line(partial) if partial is not None else None
            boot = self.shift.boot(boot) if boot is not None else None
        message = Received(self._lines, partial, BootSnapshot.of(boot) if boot else None,
                           session)
        self._unhandled = message
        self.post(message)
        self._lines = []
        self._last_post = time.monotonic()
        self._partial_size = capture.framer.pending_size
        boots = capture.boots
        self._milestones = len(boots[-1].milestones) + len(boots) if boots else 0

    def _changed(self, capture: Capture) -> bool:
        boots = capture.boots
        milestones = len(boots[-1].milestones) + len(boots) if boots else 0
        return (capture.framer.pending_size != self._partial_size
                or milestones != self._milestones)
