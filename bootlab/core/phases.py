"""Milestones and phases: the tracker that turns marker hits into a per-boot timeline.

The tracker is fed line by line (live or from a file, the same way) and keeps a list of boots;
a `new_boot` marker seen again, or seen after a later stage was reached, starts a new boot.
Phase rows are computed from a boot's milestones on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from bootlab.core.profiles import STAGES, Marker, Profile

Clock = Literal["host", "kernel"]
_USERSPACE = STAGES.index("userspace")
Values = dict[str, int | float | str]


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """A line ready for matching: its cleaned text and its times."""

    number: int
    text: str
    """Cleaned text, safe to show."""
    message: str
    """`text` without its leading printk or bootloader stamp."""
    host_s: float | None
    kernel_s: float | None
    boot_s: float | None
    offset: int = 0
    """Byte offset of the line's first byte in the stream."""


@dataclass(frozen=True, slots=True)
class Milestone:
    """A milestone reached on a given line."""

    id: str
    title: str
    stage: str
    line: int
    text: str
    host_s: float | None
    kernel_s: float | None
    boot_s: float | None
    values: Values
    fallback: bool = False
    """Placed by a fallback rule, not by the milestone's own line."""
    fail: bool = False
    boot: int = 1
    """Index of the boot it belongs to."""

    def time(self, clock: Clock) -> float | None:
        """This milestone's time on the given clock."""
        return self.host_s if clock == "host" else self.kernel_s


@dataclass
class Boot:
    """One boot found in a stream."""

    index: int
    first_line: int
    start_host_s: float | None
    first_offset: int = 0
    """Byte offset where the boot's first line starts in the stream."""
    milestones: list[Milestone] = field(default_factory=list)

    def reached(self, marker_id: str) -> Milestone | None:
        """The first occurrence of a milestone in this boot."""
        for milestone in self.milestones:
            if milestone.id == marker_id:
                return milestone
        return None

    @property
    def failed(self) -> bool:
        """A fail marker (panic, oops) was seen."""
        return any(m.fail for m in self.milestones)


@dataclass(frozen=True, slots=True)
class PhaseRow:
    """One row of the phase table: a milestone and the time around it."""

    milestone: Milestone
    elapsed_s: float | None
    """Time since the reference point."""
    delta_s: float | None
    """Time since the previous milestone."""
    duration_s: float | None
    """Time until the next milestone (None for the last)."""


def choose_clock(boot: Boot) -> Clock:
    """Host time when the stream has it, else the kernel's printk time."""
    if boot.start_host_s is not None or any(m.host_s is not None for m in boot.milestones):
        return "host"
    return "kernel"


def phase_rows(boot: Boot, reference: str = "first-byte",
               clock: Clock | None = None) -> list[PhaseRow]:
    """The phase table of a boot.

    Args:
        boot: the boot.
        reference: "first-byte" (the boot's first line) or a milestone id.
        clock: which time to use; by default the host clock when present.

    Returns:
        One row per milestone, in order.
    """
    clock = clock or choose_clock(boot)
    if reference == "first-byte":
        zero = boot.start_host_s if clock == "host" else 0.0
    else:
        ref = boot.reached(reference)
        zero = ref.time(clock) if ref else None
    times = [m.time(clock) for m in boot.milestones]
    rows = []
    for i, milestone in enumerate(boot.milestones):
        t = times[i]
        prev = times[i - 1] if i else zero
        nxt = times[i + 1] if i + 1 < len(times) else None
        rows.append(PhaseRow(
            milestone,
            None if t is None or zero is None else t - zero,
            None if t is None or prev is None else t - prev,
            None if t is None or nxt is None else nxt - t,
        ))
    return rows


class PhaseTracker:
    """Turns marker hits, line by line, into boots and milestones."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.boots: list[Boot] = []
        self._armed: dict[str, Marker] = {}
        self._seen_partial: set[tuple[str, int]] = set()

    @property
    def armed(self) -> bool:
        """A fallback is waiting: every line must be fed, not only those with hits."""
        return bool(self._armed)

    @property
    def current(self) -> Boot | None:
        """The boot being tracked."""
        return self.boots[-1] if self.boots else None

    def _boot_for(self, line: ParsedLine, hits: list[tuple[Marker, Values]]) -> Boot:
        boot = self.current
        if boot is None:
            boot = Boot(1, line.number, line.host_s, line.offset)
            self.boots.append(boot)
            return boot
        for marker, _ in hits:
            if marker.new_boot and boot.milestones and (
                boot.reached(marker.id) is not None
                or any(STAGES.index(m.stage) > marker.stage_index for m in boot.milestones)
            ):
                boot = Boot(boot.index + 1, line.number, line.host_s, line.offset)
                self.boots.append(boot)
                self._armed.clear()
                return boot
        return boot

    def start(self, line: ParsedLine) -> None:
        """Open the first boot at the stream's first line, so the reference is the first byte."""
        if not self.boots:
            self.boots.append(Boot(1, line.number, line.host_s, line.offset))

    def feed(self, line: ParsedLine, hits: list[tuple[Marker, Values]],
             partial: bool = False) -> list[Milestone]:
        """Apply one line's hits; return the milestones it reached.

        Args:
            line: the line.
            hits: markers whose patterns matched it, with extracted values.
            partial: the line is still arriving (only `partial` markers are in `hits`).
        """
        boot = self._boot_for(line, hits)
        reached: list[Milestone] = []
        for marker, values in hits:
            key = (marker.id, line.number)
            if key in self._seen_partial:
                if not partial:
                    self._complete(boot, marker.id, line, values)
                continue
            if partial:
                self._seen_partial.add(key)
            if not self._take(boot, marker):
                continue
            reached.append(self._record(boot, marker, line, values, fallback=False))
            self._armed.pop(marker.id, None)
        if self._armed and not partial:
            reached += self._fallbacks(boot, line, hits)
        for milestone in reached:
            self._arm_after(boot, milestone.id)
        return reached

    @staticmethod
    def _complete(boot: Boot, marker_id: str, line: ParsedLine, values: Values) -> None:
        """A prompt seen while arriving is now complete: keep its time, take its final text."""
        for i, milestone in enumerate(boot.milestones):
            if milestone.id == marker_id and milestone.line == line.number:
                boot.milestones[i] = replace(milestone, text=line.text, values=values)

    def _take(self, boot: Boot, marker: Marker) -> bool:
        """Whether a hit of `marker` is recorded, per its `occurrence` rule."""
        previous = boot.reached(marker.id)
        if previous is None or marker.occurrence == "every":
            return True
        if marker.occurrence == "first":
            return False
        order = self.profile.order
        start = boot.milestones.index(previous)
        if any(order.get(m.id, -1) > order[marker.id] for m in boot.milestones[start + 1:]):
            return False
        boot.milestones.remove(previous)
        return True

    def _fallbacks(self, boot: Boot, line: ParsedLine,
                   hits: list[tuple[Marker, Values]]) -> list[Milestone]:
        """Fire or cancel the armed fallbacks on this line.

        A fallback is cancelled by the milestone's own stage showing up by its own lines (then
        the console is not quiet and the real line will come); it fires on the first non-blank
        line that carries no kernel stamp and is not one of the `skip` milestones.
        """
        fired = []
        for marker_id, marker in list(self._armed.items()):
            assert marker.fallback is not None
            skip = set(marker.fallback.skip)
            after = self.profile.by_id[marker.fallback.after]
            # Only what `quiet` hides cancels: the kernel's own lines (stages after `after` and
            # before userspace). Userspace output shows init has started, quiet or not.
            window = range(after.stage_index + 1, min(marker.stage_index, _USERSPACE - 1) + 1)
            if any(m.stage_index in window for m, _ in hits if m.id not in skip):
                del self._armed[marker_id]
                continue
            if any(m.id in skip for m, _ in hits) or not line.message.strip() \
                    or line.kernel_s is not None:
                continue
            del self._armed[marker_id]
            fired.append(self._record(boot, marker, line, {}, fallback=True))
        return fired

    def _arm_after(self, boot: Boot, marker_id: str) -> None:
        for marker in self.profile.markers:
            if (marker.fallback and marker.fallback.after == marker_id
                    and boot.reached(marker.id) is None):
                self._armed[marker.id] = marker

    @staticmethod
    def _record(boot: Boot, marker: Marker, line: ParsedLine, values: Values,
                fallback: bool) -> Milestone:
        milestone = Milestone(marker.id, marker.title, marker.stage, line.number, line.text,
                              line.host_s, line.kernel_s, line.boot_s, values, fallback,
                              marker.fail, boot.index)
        boot.milestones.append(milestone)
        return milestone
