"""Replaying a recorded session: its chunks fed at their recorded times, scaled by a speed.

The chunks go through the same `Capture` as a live port, so lines, prompts and milestones
appear just as they did while the board booted. Speed and pause can change at any time from
the UI thread; the player re-anchors its clock so playback continues from where it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bootlab.core.analysis import Capture
from bootlab.core.profiles import Profile
from bootlab.ui.feed import HEARTBEAT_S, Batcher, Post
from bootlab.ui.messages import ReplayEnded

SPEEDS = (1.0, 10.0, 0.0)
"""The speeds the speed key cycles through; 0 plays at once."""


def speed_label(speed: float) -> str:
    """`1x`, `10x`, or `instant`."""
    return "instant" if speed == 0 else f"{speed:g}x"


class Player:
    """A session's received chunks played on a worker thread."""

    live = False
    baud: int | None

    def __init__(self, path: Path, chunks: Sequence[tuple[int, bytes]], profile: Profile,
                 meta: dict[str, object], speed: float = 1.0) -> None:
        self.path = path
        self.name = f"replay: {path.name}"
        self.chunks = chunks
        self.profile = profile
        self.meta = meta
        baud = meta.get("baud")
        self.baud = baud if isinstance(baud, int) else None
        self._lock = threading.Lock()
        self._speed = speed
        self._paused = False
        self._ended = False
        self._stopping = threading.Event()
        self._position_s = 0.0
        """Session time played so far."""
        self._anchor = (0.0, 0.0)
        """(wall clock, session time) that playback is timed from."""

    @property
    def speed(self) -> float:
        """Playback speed (0: instant)."""
        return self._speed

    @property
    def paused(self) -> bool:
        """Playback is paused."""
        return self._paused

    def clock_s(self) -> float:
        """Session time now: where playback is, moving on between chunks while playing."""
        with self._lock:
            if self._paused or self._speed == 0 or self._ended:
                return self._position_s
            wall, anchor_s = self._anchor
            return anchor_s + (time.monotonic() - wall) * self._speed

    def set_speed(self, speed: float) -> None:
        """Play on at another speed from where playback is."""
        with self._lock:
            self._speed = speed
            self._anchor = (time.monotonic(), self._position_s)

    def set_paused(self, paused: bool) -> None:
        """Pause, or resume from where playback is."""
        with self._lock:
            self._paused = paused
            self._anchor = (time.monotonic(), self._position_s)

    def stop(self) -> None:
        """End `run` soon."""
        self._stopping.set()

    def run(self, post: Post, cancelled: Callable[[], bool]) -> None:
        """Play every chunk at its time, then finish the last line and post `ReplayEnded`."""
        capture = Capture(self.profile)
        batch = Batcher(post)
        with self._lock:
            self._anchor = (time.monotonic(), 0.0)

        def done() -> bool:
            return cancelled() or self._stopping.is_set()

        for t_ns, data in self.chunks:
            if not self._wait_until(t_ns / 1e9, done, lambda: batch.maybe_post(capture)):
                return
            batch.add(capture.feed(data, t_ns).lines)
            with self._lock:
                self._position_s = t_ns / 1e9
            batch.maybe_post(capture)
        batch.add(capture.finish().lines)
        with self._lock:
            self._ended = True
        batch.post_now(capture)
        post(ReplayEnded())

    def _wait_until(self, t_s: float, done: Callable[[], bool],
                    idle: Callable[[], None]) -> bool:
        """Sleep until session time `t_s` is due (calling `idle` meanwhile); False when
        stopped first."""
        while not done():
            with self._lock:
                speed, paused, (wall, anchor_s) = self._speed, self._paused, self._anchor
            if not paused:
                if speed == 0:
                    return True
                delay = wall + (t_s - anchor_s) / speed - time.monotonic()
                if delay <= 0:
                    return True
            else:
                delay = HEARTBEAT_S
            idle()
            self._stopping.wait(min(delay, HEARTBEAT_S))
        return False
