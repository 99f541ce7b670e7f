"""Replaying a recorded session: its chunks fed at their recorded times, scaled by a speed.

The chunks go through the same `Capture` as a live port, so lines, prompts and milestones
appear just as they did while the board booted. Speed, pause and seeks are asked for from the
UI thread and carried out by the worker: a seek forward feeds the chunks up to the target at
once; a seek back posts `ReplayRewound` (the screen clears its panes) and feeds a new capture
from the start up to the target at once, so the panes show exactly what they showed live at
that moment. A session whose dmesg was collected after the goal (`--collect`) posts it, joined
to its boot (`session.collected`), once playback passes the moment it was read.

Checkpoints (the capture's state, copied) make seeks short: playback leaves one every
`CHECKPOINT_BYTES` or so, and a big session (`SCAN_BYTES` and more: an hour of a flood) is
also scanned ahead of playback on a thread of its own (`scan_ahead`), which leaves
`MAX_AHEAD` checkpoints spread over the whole session; a seek, forward or back, restarts from
the last checkpoint before its target when that is ahead of where playback is.
"""

from __future__ import annotations

import copy
import threading
import time
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bootlab.core.analysis.goals import session_profile
from bootlab.core.analysis.loading import recorded_profile
from bootlab.core.analysis.pipeline import Capture
from bootlab.core.analysis.profiles import Profile
from bootlab.core.capture.lines import SCROLLBACK_LINES, Line, LineBlock, LineFramer
from bootlab.core.capture.session_index import IndexedChunks
from bootlab.core.capture.sources import Source, open_source
from bootlab.core.files.config import profile_dirs
from bootlab.session.batcher import HEARTBEAT_S, Batcher
from bootlab.session.collected import collected_at, collected_boot
from bootlab.session.events import Collected, Post, Received, ReplayEnded, ReplayRewound

SPEEDS = (1.0, 10.0, 0.0)
"""The speeds the speed key cycles through; 0 plays at once."""
SEEK_STEP_S = 5.0
"""How far the seek keys move."""
_SAME_TIME_S = 1e-3
"""Milestones closer than this to where playback is count as here, not before or after."""


def speed_label(speed: float) -> str:
    """`1x`, `10x`, or `instant`."""
    return "instant" if speed == 0 else f"{speed:g}x"


@dataclass(frozen=True)
class _Seek:
    """A seek asked for: to a session time, or to the milestone after (+1) or before (-1)
    the time `from_s`."""

    to_s: float | None = None
    milestone: int = 0
    from_s: float = 0.0


@dataclass
class _Playback:
    """The worker's state: a capture fed up to chunk `index`, and its batcher."""

    capture: Capture
    batch: Batcher
    index: int = 0
    finished: bool = False
    fed_s: float = 0.0
    """Time of the last chunk fed."""
    since_checkpoint: int = 0
    """Bytes fed since the last checkpoint."""
    stale: bool = False
    """The panes show a moment read from the index (`Player._preview`), not this playback:
    the next seek starts them afresh."""
    collected: bool = False
    """The collected dmesg was posted (playback passed it)."""

    def heartbeat(self) -> None:
        """Post what was fed if it is time to."""
        self.batch.maybe_post(self.capture)


class Player:
    """A session's received chunks played on a worker thread."""

    live = False
    baud: int | None

    def __init__(self, path: Path, chunks: Sequence[tuple[int, bytes]], profile: Profile,
                 meta: dict[str, object], speed: float = 1.0,
                 collected_s: float | None = None) -> None:
        self.path = path
        self.collected_s = collected_s
        """When the board's dmesg was collected, in session seconds (None: it was not)."""
        self.name = f"replay: {path.name}"
        self.chunks = chunks
        self.profile = profile
        self.meta = meta
        baud = meta.get("baud")
        self.baud = baud if isinstance(baud, int) else None
        self.duration_s = chunks[-1][0] / 1e9 if chunks else 0.0
        """Time of the last chunk: the end of the replay."""
        self.received = chunks.indexed.stream_size if isinstance(chunks, IndexedChunks) \
            else sum(len(data) for _, data in chunks)
        self.big = self.received >= SCAN_BYTES
        """Scanned ahead of playback, and its captures scan reads with RE2 (`Capture.bulk`):
        seeking in an hour's flood then feeds ~250 MB/s, not ~25."""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        """Set when the worker should look at its controls again (seek, pause, stop)."""
        self._speed = speed
        self._paused = False
        self._ended = False
        self._stopping = threading.Event()
        self._seek: _Seek | None = None
        self._checkpoints: list[tuple[int, float, Capture]] = []
        """(chunks fed, time of the last one, the capture then), ascending: a seek back
        starts from the last one before its target, not from the first byte."""
        self._ahead: list[tuple[int, float, Capture]] = []
        """Checkpoints the scan ahead of playback left (`scan_ahead`), ascending."""
        self.scanned = threading.Event()
        """Set when the scan ahead has reached the end (or is not needed)."""
        if not self.big:
            self.scanned.set()
        self._spacing = CHECKPOINT_BYTES
        """Received bytes between two checkpoints (doubled as they are thinned out)."""
        self._arrivals: list[float] | None = None
        """When each milestone was first reached, as played (computed on the first jump)."""
        self._position_s = 0.0
        """Session time played so far."""
        self._catching_up = False
        self._anchor = (0.0, 0.0)
        """(wall clock, session time) that playback is timed from."""

    @property
    def speed(self) -> float:
        """Playback speed (0: instant)."""
        return self._speed

    @property
    def catching_up(self) -> bool:
        """The console shows where a seek went, and the phases there are still being worked
        out (the scan ahead has not reached it yet)."""
        return self._catching_up

    @property
    def paused(self) -> bool:
        """Playback is paused."""
        return self._paused

    @property
    def ended(self) -> bool:
        """Everything was played (a seek back plays it again)."""
        return self._ended

    def clock_s(self) -> float:
        """Session time now: where playback is, moving on between chunks while playing."""
        with self._lock:
            if self._paused or self._speed == 0 or self._ended or self._catching_up:
                return self._position_s
            wall, anchor_s = self._anchor
            return min(self.duration_s, anchor_s + (time.monotonic() - wall) * self._speed)

    def set_speed(self, speed: float) -> None:
        """Play on at another speed from where playback is."""
        with self._lock:
            self._speed = speed
            self._anchor = (time.monotonic(), self._position_s)
        self._wake.set()

    def set_paused(self, paused: bool) -> None:
        """Pause where the clock is (never back to the last line played), or resume from
        there."""
        now = self.clock_s()
        with self._lock:
            if paused and not self._paused:
                self._position_s = now
            self._paused = paused
            self._anchor = (time.monotonic(), self._position_s)
        self._wake.set()

    def seek_to(self, t_s: float) -> None:
        """Go to session time `t_s` (kept within the session), keeping the pause and speed."""
        self._ask(_Seek(to_s=t_s))

    def seek_by(self, delta_s: float) -> None:
        """Go `delta_s` seconds forward (or back, when negative) from where playback is."""
        self.seek_to(self.clock_s() + delta_s)

    def seek_milestone(self, direction: int) -> None:
        """Go to the moment the next (+1) or previous (-1) milestone was reached; past the
        last one is the end, before the first the start."""
        self._ask(_Seek(milestone=direction, from_s=self.clock_s()))

    def _ask(self, seek: _Seek) -> None:
        with self._lock:
            self._seek = seek
        self._wake.set()

    def stop(self) -> None:
        """End `run` soon."""
        self._stopping.set()
        self._wake.set()

    def run(self, post: Post, cancelled: Callable[[], bool]) -> None:
        """Play every chunk at its time, finish the last line and post `ReplayEnded`; then
        stay until stopped, so a seek can play it again."""

        def done() -> bool:
            return cancelled() or self._stopping.is_set()

        state = _Playback(Capture(self.profile, self.big), Batcher(post))
        with self._lock:
            self._anchor = (time.monotonic(), 0.0)
        threading.Thread(target=self.scan_ahead, args=(done,), name="replay scan",
                         daemon=True).start()
        while not done():
            with self._lock:
                seek, self._seek = self._seek, None
            if seek is not None:
                state = self._seek_to(state, seek, post)
            elif state.index < len(self.chunks):
                t_s = self.chunks[state.index][0] / 1e9
                if self._wait_until(t_s, state.heartbeat):
                    self._feed(state)
                    with self._lock:  # a pause may have left the clock past this chunk
                        self._position_s = max(self._position_s, t_s)
                    state.heartbeat()
            elif not state.finished:
                state.batch.add(state.capture.finish().lines)
                state.finished = True
                with self._lock:
                    self._ended = True
                    self._position_s = self.duration_s
                state.batch.post_now(state.capture)
                post(ReplayEnded())
            else:
                self._wake.wait(HEARTBEAT_S)
                self._wake.clear()
            self._tell_collected(state)

    @cached_property
    def collected(self) -> Collected | None:
        """The session's collected dmesg joined to its boot (read on the worker, once)."""
        return collected_boot(self.path, self.profile)

    def _tell_collected(self, state: _Playback) -> None:
        """Post the collected dmesg once playback has passed the moment it was read (again
        after a seek back), after the lines and the boot fed so far."""
        at = self.collected_s
        if at is None or state.collected or not (state.finished or state.fed_s >= at):
            return
        state.collected = True
        if self.collected is not None:
            state.batch.post_now(state.capture)
            state.batch.post(self.collected)

    def _feed(self, state: _Playback, show: bool = True) -> LineBlock:
        """Feed the next chunk; its lines go to the batch when `show`."""
        t_ns, data = self.chunks[state.index]
        block = state.capture.feed(data, t_ns).block
        if show:
            state.batch.add(block.lines())
        state.index += 1
        state.fed_s = t_ns / 1e9
        state.since_checkpoint += len(data)
        if state.since_checkpoint >= self._spacing and (
                not self._checkpoints or self._checkpoints[-1][0] < state.index):
            self._checkpoints.append((state.index, state.fed_s, _copy(state.capture)))
            state.since_checkpoint = 0
            if len(self._checkpoints) > MAX_CHECKPOINTS:  # every other one, twice as far apart
                del self._checkpoints[::2]
                self._spacing *= 2
        return block

    def scan_ahead(self, cancelled: Callable[[], bool]) -> None:
        """Feed a capture of its own through a big session ahead of playback, leaving
        `MAX_AHEAD` checkpoints spread over it (`_ahead`); `scanned` is set at the end."""
        try:
            if not self.big:
                return
            chunks = self.chunks
            if isinstance(chunks, IndexedChunks):  # its own reader: runs are not shared
                chunks = IndexedChunks(chunks.indexed)
            spacing, since = max(CHECKPOINT_BYTES, self.received // MAX_AHEAD), 0
            capture = Capture(self.profile, bulk=True)
            for index in range(len(chunks)):
                if cancelled():
                    return
                t_ns, data = chunks[index]
                capture.feed(data, t_ns)
                since += len(data)
                if since >= spacing:
                    since = 0
                    with self._lock:
                        self._ahead.append((index + 1, t_ns / 1e9, _copy(capture)))
        finally:
            self.scanned.set()

    def _checkpoint_before(self, target_s: float) -> tuple[int, float, Capture] | None:
        """The last checkpoint, of playback or of the scan, at or before `target_s`."""
        with self._lock:
            found = [points[at - 1] for points in (self._checkpoints, self._ahead)
                     if (at := bisect_right([fed_s for _, fed_s, _ in points], target_s))]
        return max(found, key=lambda point: point[0], default=None)

    def _restart(self, target_s: float, post: Post) -> _Playback:
        """Playback from the last checkpoint at or before `target_s` (else the start)."""
        found = self._checkpoint_before(target_s)
        if found is None:
            return _Playback(Capture(self.profile, self.big), Batcher(post))
        index, fed_s, capture = found
        return _Playback(_copy(capture), Batcher(post), index, fed_s=fed_s)

    def _seek_to(self, state: _Playback, seek: _Seek, post: Post) -> _Playback:
        """Feed up to the target at once (from a new capture when it lies behind)."""
        if seek.to_s is not None:
            target = seek.to_s
        else:
            target = self._milestone_time(seek.from_s, seek.milestone)
        target = min(max(target, 0.0), self.duration_s)
        shown = False
        if self._behind_scan(target, state):
            shown = self._show_preview(target, state, post)
            with self._lock:
                self._catching_up = shown
            passed = self._scan_passed(target, state)
            with self._lock:
                self._catching_up = False
            if not passed:
                return state  # a newer seek, or a stop, came while waiting
        ahead = self._checkpoint_before(target)
        if target < state.fed_s or (state.finished and target < self.duration_s) \
                or (ahead is not None and ahead[0] > state.index) or state.stale:
            if not shown:
                post(ReplayRewound())
            state = self._restart(target, post)
        # Only the lines the console keeps are made and posted: a seek across an hour's
        # flood would otherwise make millions of Line objects for the console to drop.
        held: deque[LineBlock] = deque()
        count = 0
        while state.index < len(self.chunks) and self.chunks[state.index][0] / 1e9 <= target:
            block = self._feed(state, show=False)
            if shown:
                continue  # the preview has them on screen
            held.append(block)
            count += _size(block)
            while count - _size(held[0]) >= SCROLLBACK_LINES:
                count -= _size(held.popleft())
        for block in held:
            state.batch.add(block.lines())
        with self._lock:
            self._ended = state.finished
            self._position_s = target
            self._anchor = (time.monotonic(), target)
        state.batch.post_now(state.capture)
        return state

    def _behind_scan(self, target_s: float, state: _Playback) -> bool:
        """Whether the scan ahead is running and neither it nor playback has reached
        `target_s`."""
        with self._lock:
            reached = bool(self._ahead) and self._ahead[-1][1] >= target_s
        return not (self.scanned.is_set() or reached or state.fed_s >= target_s)

    def _show_preview(self, target_s: float, state: _Playback, post: Post) -> bool:
        """Show the console at `target_s` from the index at once (`_preview`), before the
        capture gets there; False when the session has no index."""
        preview = self._preview(target_s)
        if preview is None:
            return False
        lines, partial = preview
        post(ReplayRewound())
        post(Received(lines, partial, None))
        state.stale = True
        with self._lock:
            self._position_s = target_s
            self._anchor = (time.monotonic(), target_s)
        return True

    def _preview(self, target_s: float) -> tuple[list[Line], Line | None] | None:
        """The console at `target_s` read straight from the session's index: the newest
        lines it keeps before then, framed from a line start as the capture frames them
        (same numbers, times and offsets), and the line still arriving; None without an
        index."""
        chunks = self.chunks
        if not isinstance(chunks, IndexedChunks):
            return None
        index = chunks.indexed
        stop = bisect_right(index.times_ns, target_s, key=lambda t_ns: t_ns / 1e9)
        if not stop:
            return [], None
        start = max(0, bisect_left(index.lines_before,
                                   index.lines_before[stop - 1] - SCROLLBACK_LINES) - 1)
        number, offset = index.lines_before[start] + 1, index.stream_offsets[start]
        framer: LineFramer | None = None
        lines: list[Line] = []
        for t_ns, data in index.read(start, stop):
            if framer is None:
                if start:  # the line at the chunk's first byte began before it: skip it
                    cut = data.find(b"\n")
                    if cut < 0:
                        offset += len(data)
                        continue
                    data = data[cut + 1:]
                    number, offset = number + 1, offset + cut + 1
                framer = LineFramer(number=number, offset=offset)
            lines += framer.feed_block(data, t_ns).lines()
        return lines[-SCROLLBACK_LINES:], framer.partial if framer else None

    def _scan_passed(self, target_s: float, state: _Playback) -> bool:
        """Wait, if the scan ahead is running and has not passed `target_s` (nor has
        playback), until it has: it gets there faster alone than a capture fed alongside it
        from where playback is (the two would share one interpreter). False when a seek or a
        stop came meanwhile."""
        while self._behind_scan(target_s, state):
            with self._lock:
                if self._seek is not None or self._stopping.is_set():
                    return False
            self._wake.wait(SCAN_POLL_S)
            self._wake.clear()
        return True

    def _milestone_time(self, from_s: float, direction: int) -> float:
        if self._arrivals is None:
            self._arrivals = milestone_arrivals(self.chunks, self.profile, self.big)
        if direction > 0:
            later = [t for t in self._arrivals if t > from_s + _SAME_TIME_S]
            return later[0] if later else self.duration_s
        earlier = [t for t in self._arrivals if t < from_s - _SAME_TIME_S]
        return earlier[-1] if earlier else 0.0

    def _wait_until(self, t_s: float, idle: Callable[[], None]) -> bool:
        """Wait until session time `t_s` is due (calling `idle` meanwhile); False when
        something else needs the worker first (a seek, a stop)."""
        while True:
            with self._lock:
                if self._seek is not None or self._stopping.is_set():
                    return False
                speed, paused, (wall, anchor_s) = self._speed, self._paused, self._anchor
            if paused:
                delay = HEARTBEAT_S
            elif speed == 0:
                return True
            else:
                delay = wall + (t_s - anchor_s) / speed - time.monotonic()
                if delay <= 0:
                    return True
            idle()
            self._wake.wait(min(delay, HEARTBEAT_S))
            self._wake.clear()


CHECKPOINT_BYTES = 1 << 20
"""Received bytes fed between two checkpoints at first: a seek back feeds at most about this
much (twice as much each time they are thinned out)."""
MAX_CHECKPOINTS = 64
"""Checkpoints kept at most: each holds the capture's state (a reboot loop's many boots), so
a long replay thins them out rather than keep one per megabyte."""
SCAN_BYTES = 16 << 20
"""Sessions receiving this much and more are scanned ahead of playback (`scan_ahead`)."""
SCAN_POLL_S = 0.02
"""How often a seek waiting for the scan ahead looks at its progress."""
MAX_AHEAD = 128
"""Checkpoints the scan ahead leaves, evenly spread (an hour's flood: one per ~3 MB)."""


def _size(block: LineBlock) -> int:
    """Lines a block holds (a cut or last line included)."""
    return block.count + (block.tail is not None)


def _copy(capture: Capture) -> Capture:
    """A capture's state, copied (its profile and markers, which never change, shared)."""
    profile = capture.tracker.profile
    memo: dict[int, object] = {id(capture.markers): capture.markers, id(profile): profile}
    memo.update((id(marker), marker) for marker in profile.markers)
    return copy.deepcopy(capture, memo)


def milestone_arrivals(chunks: Sequence[tuple[int, bytes]], profile: Profile,
                       bulk: bool = False) -> list[float]:
    """The session times at which a capture of these chunks reached a new milestone."""
    capture = Capture(profile, bulk)
    arrivals: list[float] = []
    seen = 0
    for t_ns, data in chunks:
        capture.feed(data, t_ns)
        reached = sum(len(boot.milestones) for boot in capture.boots)
        if reached > seen:
            arrivals.append(t_ns / 1e9)
        seen = reached
    return arrivals


@dataclass
class Replay:
    """A session opened for replay: its player, the profile it plays with, what to say."""

    player: Player
    profile: Profile
    """The profile it was recorded with; the player's holds the session's pattern goal too."""
    notices: list[str]


def open_replay(path: Path, sessions: Path | None = None, speed: float = 1.0) -> Replay:
    """Load a session, or any boot log `open_source` reads (a grabserial log, a plain
    capture, dmesg), for replay with the profile it was recorded with (else linux) and its
    stored goal. A log that is no session plays its lines at the times it holds (one after
    the other where it holds none).

    Raises:
        SourceError: the file is not a readable boot log.
    """
    source = open_source(path)
    profile = recorded_profile(source, profile_dirs(sessions))
    notices = [f"{path.name}: {notice}" for notice in source.notices]
    chunks = IndexedChunks(source.stream) if source.stream is not None else \
        source.session.chunks if source.session is not None else log_chunks(source)
    player = Player(path, chunks, session_profile(profile, source.meta),
                    dict(source.meta), speed, collected_at(source))
    return Replay(player, profile, notices)


def log_chunks(source: Source) -> list[tuple[int, bytes]]:
    """A log's lines as a session's reads: each line at its host time (ns), the previous
    line's where it has none (no times at all: every line at once)."""
    chunks: list[tuple[int, bytes]] = []
    offset, t_ns = 0, 0
    for number, line in enumerate(source.data.splitlines(keepends=True), start=1):
        seconds = source.line_time(number, offset) if source.line_time else None
        if seconds is not None:
            t_ns = max(t_ns, int(seconds * 1e9))
        chunks.append((t_ns, line))
        offset += len(line)
    return chunks
