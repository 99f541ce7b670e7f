"""Recording boots: the live pipeline plus one session file per boot and the stop rules.

Used by `bootlab record` (and the TUI): feed it chunks stamped with CLOCK_MONOTONIC; it writes
them to the current session first (so nothing is lost if anything after fails), frames and
matches them, starts a new session file when a new boot begins, and says when to stop.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bootlab.core.analysis.phases import BootGap, Milestone
from bootlab.core.analysis.pipeline import Capture, MarkerSet
from bootlab.core.analysis.profiles import Profile
from bootlab.core.analysis.timezero import CUT_SHORT_NS, MOVED, starts_boot
from bootlab.core.capture.linemap import ByteMap
from bootlab.core.capture.lines import Line, LineBlock
from bootlab.core.capture.session import SessionWriter, session_path

SPLIT_LINE_LIMIT = 64 * 1024


@dataclass
class StopRule:
    """When a boot counts as done, and when recording ends."""

    until: tuple[str, ...] = ()
    """Milestone ids: the boot is done when any of them is reached (a pattern goal is one:
    `goal`, see bootlab/core/analysis/goals.py), or with `every`, each of them."""
    boots: int = 1
    """Stop after this many boots are done (or, without a done rule, when boot N+1 starts)."""
    timeout_s: float | None = None
    """Give up on a boot this long after it started."""
    every: bool = False
    """A boot is done once each milestone of `until` is reached, not the first of them."""

    @property
    def has_goal(self) -> bool:
        """A boot can be 'done' before the next one starts."""
        return bool(self.until)


@dataclass
class BootRecord:
    """A boot recorded to a file."""

    path: Path
    index: int
    done: bool = False
    goals: set[str] = field(default_factory=set)
    """The goal milestones it reached so far."""
    gap: bool = False
    """Bytes were lost while it was recorded: its boot is incomplete (`analysis.gaps`)."""


class Recorder:
    """Live capture into session files, one per boot."""

    def __init__(self, profile: Profile, folder: Path, meta: dict[str, Any], rule: StopRule,
                 start_ns: int | None = None,
                 on_milestone: Callable[[BootRecord, Milestone], None] | None = None,
                 on_line: Callable[[Line], None] | None = None,
                 on_block: Callable[[LineBlock], None] | None = None,
                 auto_split: bool = True,
                 on_write_error: Callable[[SessionWriter], object] | None = None) -> None:
        self.profile = profile
        self.on_write_error = on_write_error
        """Called when a session file cannot be written (then recording goes on without it);
        None: SessionWriteError is raised (by the constructor and `feed`)."""
        self.auto_split = auto_split
        """Start a new file when a new boot shows up in the stream (a second banner)."""
        self.capture = Capture(profile)
        self.folder = folder
        self.meta = meta
        self.rule = rule
        self.on_milestone = on_milestone
        self.on_line = on_line
        self.on_block = on_block
        """Called with each read's lines as one block (cheaper than `on_line` per line)."""
        self.start_ns = time.monotonic_ns() if start_ns is None else start_ns
        self.writer = self._open(self.start_ns, 1)
        self.records = [BootRecord(self.writer.path, 1)]
        self._boot_start_ns = self.start_ns
        self._stream_base = 0
        self._first_record = 1
        """The record holding the capture's boot 1 (the capture restarts at `start_session`)."""
        self._tail: deque[tuple[int, int, bytes]] = deque()
        self.finished = False
        self.timed_out = False
        self.zero_ns: int | None = None
        """When bootlab started the boot of this session (the power-on, the reset or boot
        command it sent): bytes stamped before it are the previous boot's output still
        arriving (a buffer drained late) and are recorded apart, never matched."""
        self._restarted: tuple[str, int, dict[str, Any]] | None = None
        """The last power-on command stamped in this session (`ran_ms` in its fields): a
        boot that begins while it runs and is cut short by another (`_started_by`) was not
        the one it started; the other is, and its session opens at the stamp (`_new_boot`)."""
        self.stale_bytes = 0
        """Bytes recorded apart so far, as arrived before `zero_ns`."""
        self._gaps: list[dict[str, Any]] = []
        """This session's gaps (lost port, lost place): kept in its `gaps` meta."""
        imap = meta.get("imap")
        self.imap = ByteMap(imap if isinstance(imap, list) else ())
        """The input map the stream is framed with (`linemap`; the session keeps the bytes
        as received, and its header the map)."""

    def _open(self, start_ns: int, index: int, **extra: Any) -> SessionWriter:
        meta = {**self.meta, "boot_index": index, **extra}
        while True:
            path = session_path(self.folder, meta.get("label"))
            try:
                return SessionWriter(path, meta, start_ns, self.on_write_error)
            except FileExistsError:  # another recorder (a board of the same A/B run) took
                continue             # the name since it was found free: the next one

    @property
    def current(self) -> BootRecord:
        """The boot being recorded."""
        return self.records[-1]

    def feed(self, data: bytes, t_ns: int) -> None:
        """Take one read (t_ns: CLOCK_MONOTONIC when it arrived); b"" just checks the clock."""
        if self.finished:
            return
        if data and self.zero_ns is not None and t_ns < self.zero_ns:
            self.writer.before(data, t_ns - self._boot_start_ns)
            self.stale_bytes += len(data)
        elif data:
            self.writer.rx(data, t_ns - self._boot_start_ns)
            offset = self.capture.framer.offset
            self._tail.append((t_ns, offset, data))
            update = self.capture.feed(self.imap(data), t_ns - self.start_ns)
            if self.on_line is not None:  # Line objects only for a reader of lines
                for line in update.lines:
                    self.on_line(line)
            if self.on_block is not None:
                self.on_block(update.block)
            for milestone in update.milestones:
                self._milestone(milestone)
            self._follow_boots()
            self._prune()
        self._check_timeout(t_ns)
        self.writer.maybe_flush()

    def _milestone(self, milestone: Milestone) -> None:
        boot = self.capture.boots[milestone.boot - 1]
        if self.auto_split and boot.index + self._first_record - 1 > self.current.index:
            self._new_boot(boot.first_offset, boot.start_host_s)
            if self.finished:
                return
        if self.on_milestone is not None:
            self.on_milestone(self.current, milestone)
        if milestone.id in self.rule.until and not self.current.done:
            self.current.goals.add(milestone.id)
            if not self.rule.every or self.current.goals.issuperset(self.rule.until):
                self._done()

    def _follow_boots(self) -> None:
        """A boot the tracker opened before any milestone of it (the first line after a
        restart) gets its file now, while the reads holding its first line are still kept."""
        boots = self.capture.boots
        if self.auto_split and not self.finished and boots \
                and boots[-1].index + self._first_record - 1 > self.current.index:
            self._new_boot(boots[-1].first_offset, boots[-1].start_host_s)

    def _done(self) -> None:
        self.current.done = True
        if sum(r.done for r in self.records) >= self.rule.boots:
            self.finish("done")

    def _new_boot(self, offset: int, start_host_s: float | None) -> None:
        """The stream now holds a new boot from `offset`: close this file, open the next."""
        if self._tail:
            offset = max(offset, self._tail[0][1])  # see _prune: never before what is kept
        previous = self.writer
        last_done = not self.rule.has_goal and len(self.records) >= self.rule.boots
        boot_start = self.start_ns + int((start_host_s or 0.0) * 1e9)
        if last_done:
            previous.split(boot_start - self._boot_start_ns, offset - self._stream_base, "")
            self.finish("done")
            return
        self.current.done = self.current.done or not self.rule.has_goal
        restart, self._restarted = self._restarted, None
        opened = boot_start if restart is None or not self._started_by(restart, boot_start) \
            else restart[1]
        writer = self._open(opened, self.current.index + 1, continues=previous.path.name)
        if restart is not None and opened == restart[1]:  # the stamp that started this boot
            writer.event(restart[0], 0, **restart[2])
            previous.event(MOVED, boot_start - self._boot_start_ns, next=writer.path.name)
        previous.split(boot_start - self._boot_start_ns, offset - self._stream_base,
                       writer.path.name)
        previous.close(reason="next boot")
        for t_ns, chunk_offset, data in self._tail:
            if chunk_offset + len(data) > offset:
                cut = max(0, offset - chunk_offset)
                writer.rx(data[cut:], max(0, t_ns - opened))
        self.writer = writer
        self._boot_start_ns = opened
        self._stream_base = offset
        self.records.append(BootRecord(writer.path, self.current.index + 1))

    def _started_by(self, restart: tuple[str, int, dict[str, Any]], boot_start: int) -> bool:
        """Whether a boot beginning at `boot_start`, cutting short the boot this session
        holds, is the one a power-on command stamped here started: it began while the command
        ran or within `CUT_SHORT_NS` of its return. The boot it cut short began before the
        switch came (a board running, or powered up when its console was opened); no board
        restarts by itself so soon after its power came on."""
        t_ns, ran = restart[1], restart[2].get("ran_ms")
        return isinstance(ran, (int, float)) \
            and t_ns <= boot_start <= t_ns + ran * 1e6 + CUT_SHORT_NS

    def start_session(self, t_ns: int, **meta: Any) -> BootRecord:
        """End the current file here; what arrives from now on goes to a new one.

        Used when bootlab itself starts a boot (a reset or `boot` it typed): the new session
        starts at `t_ns`, the moment the command was issued, so the time the board takes to
        come back is measured too.
        """
        previous = self.writer
        self.meta = {**self.meta, **meta}
        writer = self._open(t_ns, self.current.index + 1, continues=previous.path.name)
        previous.split(t_ns - self._boot_start_ns, self.capture.framer.offset - self._stream_base,
                       writer.path.name)
        previous.close(reason="next session")
        self.writer = writer
        self.capture = Capture(self.profile)
        self._boot_start_ns = self.start_ns = self.zero_ns = t_ns
        self._restarted = None
        self._stream_base = 0
        self._tail.clear()
        self._gaps = []
        self.records.append(BootRecord(writer.path, self.current.index + 1))
        self._first_record = self.current.index
        return self.current

    def stamp(self, kind: str, t_ns: int, **fields: Any) -> None:
        """An event (`power`, `reset`, ...) at CLOCK_MONOTONIC `t_ns` in the current session:
        the `stamp` a place's power switch takes. A power-on, or a reset line's release, is the
        boot's time zero: what was stamped before it is not of this boot."""
        self.writer.event(kind, t_ns - self.writer.start_ns, **fields)
        if starts_boot(kind, fields):
            self.zero_ns = max(self.zero_ns or t_ns, t_ns)
            self._restarted = (kind, t_ns, fields) if "ran_ms" in fields else None

    @property
    def incomplete(self) -> str | None:
        """Why the current session's boot is not whole (its first gap), or None."""
        if not self._gaps:
            return None
        gap = self._gaps[0]
        return BootGap(gap["t"], gap["s"], gap["why"]).text()

    def lost(self, t_ns: int, reason: str) -> None:
        """The port (or the place behind it) was lost at `t_ns`: a `gap` event, and the gap
        in the session's `gaps` meta, which marks the boot it falls in incomplete."""
        at = t_ns - self.writer.start_ns
        self.writer.event("gap", at, reason=reason)
        self._gaps.append({"t": round(at / 1e9, 6), "s": None, "why": reason})
        self.writer.meta(at, gaps=list(self._gaps))
        self.current.gap = True
        boots = self.capture.boots
        if boots and not boots[-1].partial and boots[-1].gap is None:  # what the app shows
            boots[-1].gap = BootGap((t_ns - self.start_ns) / 1e9, None, reason)

    def back(self, t_ns: int, lost_ns: int) -> None:
        """The port is back at `t_ns`, lost since `lost_ns`: a `reconnect` event, and the
        gap's length in `gaps`."""
        at = t_ns - self.writer.start_ns
        gap_s = round((t_ns - lost_ns) / 1e9, 6)
        self.writer.event("reconnect", at, gap_s=gap_s)
        if self._gaps and self._gaps[-1]["s"] is None:
            self._gaps[-1]["s"] = gap_s
            boots = self.capture.boots
            if boots and boots[-1].gap is not None and boots[-1].gap.seconds is None:
                boots[-1].gap = replace(boots[-1].gap, seconds=gap_s)
        else:
            self._gaps.append({"t": round((lost_ns - self.writer.start_ns) / 1e9, 6),
                               "s": gap_s, "why": "the port was lost"})
        self.writer.meta(at, gaps=list(self._gaps))

    def use_profile(self, profile: Profile, **meta: Any) -> None:
        """Match with `profile` from the next line on and store `meta` with this session (a
        meta record: the newest value wins) and the next ones: the app's goal changed.

        Lines already received are not matched again: a milestone the new profile adds shows
        from now on (analysing the session again finds it in the whole file).
        """
        self.profile = profile
        self.capture.markers = MarkerSet(profile)
        self.capture.tracker.profile = profile
        self.meta = {**self.meta, **meta}
        self.writer.meta(time.monotonic_ns() - self.writer.start_ns, **meta)

    def _prune(self) -> None:
        """Keep only the reads holding the line being received (a new boot may start there).

        A line longer than SPLIT_LINE_LIMIT is no bootloader banner: its reads are let go, so a
        board that never sends a newline does not grow this list.
        """
        framer = self.capture.framer
        keep_from = framer.pending_offset
        if framer.pending_size > SPLIT_LINE_LIMIT:
            keep_from = framer.offset
        while self._tail and self._tail[0][1] + len(self._tail[0][2]) <= keep_from:
            self._tail.popleft()

    def _check_timeout(self, t_ns: int) -> None:
        limit = self.rule.timeout_s
        if limit is not None and (t_ns - self._boot_start_ns) / 1e9 >= limit:
            self.timed_out = True
            self.finish("timeout")

    def finish(self, reason: str = "stopped") -> None:
        """Stop: match the last unterminated line, close the file (flushed and synced)."""
        if self.finished:
            return
        self.finished = True
        update = self.capture.finish()
        if self.on_line is not None:
            for line in update.lines:
                self.on_line(line)
        if self.on_block is not None:
            self.on_block(update.block)
        for milestone in update.milestones:
            self._milestone(milestone)
        self.writer.close(reason=reason)

    def milestones(self, record: BootRecord) -> list[Milestone]:
        """The milestones a boot reached (boots split automatically, or the current file)."""
        boots = self.capture.boots
        if not self.auto_split:
            return [m for b in boots for m in b.milestones] if record is self.current else []
        position = record.index - self._first_record
        return boots[position].milestones if 0 <= position < len(boots) else []

    @property
    def succeeded(self) -> bool:
        """Every wanted boot reached its goal (always true when there is no goal)."""
        if not self.rule.has_goal:
            return True
        return sum(r.done for r in self.records) >= self.rule.boots
