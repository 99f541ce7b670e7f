"""Milestones and phases: the tracker that turns marker hits into a per-boot timeline.

The tracker is fed line by line (live or from a file, the same way) and keeps a list of boots;
a `new_boot` marker seen again (the same pattern), or seen after a later stage was reached,
starts a new boot, as does the line after a restart (`ends_boot`). Phase rows are computed from
a boot's milestones on demand.

How a hit becomes a milestone (the rules a profile states; see `profiles`):
- a `match` line places a milestone once per boot (`occurrence` says which one counts); a
  `weak` line holds the place until a `match` line of the same milestone comes;
- `context` lines say what the next hit is about (the file a load reads); a hit whose values
  fail the milestone's `unless`/`at_least` is not that milestone;
- a fallback places a milestone on the first line user space prints when its own line never
  comes; armed after a quiet console, it is withdrawn when the kernel's own lines show up.
Hits passed over are kept in `rejected`, so `analyze --explain` can say why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from bootlab.core.analysis.marker_match import Hit, Values
from bootlab.core.analysis.profiles import STAGES, Marker, Profile

if TYPE_CHECKING:
    from bootlab.core.analysis.bootstage import Bootstage
    from bootlab.core.analysis.systemd_units import SystemdRecord
    from bootlab.core.analysis.units import UnitStep

Clock = Literal["host", "kernel"]
_USERSPACE = STAGES.index("userspace")
_BOOTLOADER = STAGES.index("bootloader")
_KERNEL = STAGES.index("kernel")
_PROMPTS = ("login", "console")
"""Milestones after which the boot is done starting: nothing of its kernel comes later."""
REJECTED_LIMIT = 2000
"""Rejected hits kept per stream (a reboot loop repeats the same ones)."""

ZERO_ID = "zero"
"""The id of time zero's row in a table (`table_rows`): no profile's milestone."""
ZERO_SOURCE = "bootlab"
"""Where time zero's row was seen: bootlab's own stamp of what it did, not a line."""

__all__ = ["ZERO_ID", "ZERO_SOURCE", "Boot", "Clock", "Milestone", "ParsedLine", "PhaseRow",
           "PhaseTracker", "Rejection", "TimeZero", "Values", "choose_clock", "phase_rows",
           "silent_start", "table_rows"]


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """A line ready for matching: its cleaned text and its times."""

    number: int
    text: str
    """Cleaned text, safe to show."""
    message: str
    """What markers read: the line without its leading printk or bootloader stamp (and
    without power-on garbage before it)."""
    host_s: float | None
    kernel_s: float | None
    boot_s: float | None
    offset: int = 0
    """Byte offset of the line's first byte in the stream."""
    undrawn: str | None = None
    """The message with its backspaces kept, not drawn, when the line has any: a countdown's
    first number is the bootdelay (see `text.match_text`). Markers try it first."""
    plain: bool = False
    """The line was printable ASCII: cleaning changed nothing, so a prefilter's verdict on its
    bytes holds for its text."""
    glued: tuple[str, ...] = ()
    """Kernel messages glued later in the line after a printk time of their own (a message
    without its newline, then the next; a bootloader's last output, then the kernel's first),
    each without its stamp. Markers try them after `message`."""


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
    pattern: int = -1
    """Which of the marker's patterns matched (-1: a fallback or a user's mark)."""
    weak: bool = False
    """Placed by a `weak` pattern: a `match` line of the same milestone replaces it."""
    offset: int = 0
    """Byte offset of its line in the stream."""
    source: str = "console"
    """Where it was seen: "console", or "dmesg" (collected after the goal: `line` is dmesg's)."""
    uncertainty_ms: float | None = None
    """How far its host time may be off, where it was placed from another clock than the
    console's arrival (a collected dmesg's: `analysis.boardclock`)."""

    def time(self, clock: Clock) -> float | None:
        """This milestone's time on the given clock."""
        return self.host_s if clock == "host" else self.kernel_s


@dataclass(frozen=True, slots=True)
class BootGap:
    """Bytes lost while a boot was recorded (`analysis.gaps`): from `at_s` (host seconds,
    the stream's clock) for `seconds` (None: the port never came back)."""

    at_s: float
    seconds: float | None
    why: str
    start_lost: bool = False
    """The gap came before the boot's first line, which is no beginning of a boot: its
    start may be in the gap."""

    def text(self) -> str:
        """What is missing and why, in words."""
        long = "until the end" if self.seconds is None else f"for {self.seconds:.3f} s"
        if self.start_lost:
            return (f"incomplete: the port was lost at {self.at_s:.3f} s {long} ({self.why}) "
                    "before its first line, which is no bootloader's first line: its start is "
                    "not known, so it has no total")
        return (f"incomplete: the port was lost at {self.at_s:.3f} s {long} ({self.why}): "
                "what the board printed then is missing, so it has no total and no phase "
                "across the gap")


@dataclass(frozen=True, slots=True)
class TimeZero:
    """The moment bootlab itself started a boot (`analysis.timezero`): a power-on it switched
    or a reset or boot command it typed, stamped on the host clock as it did it."""

    at_s: float
    """Host seconds on the stream's clock."""
    what: str
    """What it was, in words (`power-on via ...`, `` `boot` typed by bootlab``)."""
    unsure_until_s: float | None = None
    """Set when a power-on command was run while the board was printing: until the command
    returned (this host time) the switch may not have come, so a boot whose first line came
    before then may be the earlier boot still running, not the one it started."""


@dataclass
class Boot:
    """One boot found in a stream."""

    index: int
    first_line: int
    start_host_s: float | None
    first_offset: int = 0
    """Byte offset where the boot's first line starts in the stream."""
    milestones: list[Milestone] = field(default_factory=list)
    partial: bool = False
    """The end of a boot that began before the capture (its shutdown): it has no timeline."""
    text_before: bool | None = None
    """Whether anything but blank lines came before its first milestone (None: not known)."""
    gap: BootGap | None = None
    """Bytes of this boot were lost (a reconnect): it is incomplete (`analysis.gaps`)."""
    collected: str | None = None
    """What was read from the board after its goal and how it joined the table, in words
    (`analysis.collected`; None: nothing was)."""
    apart: list[Milestone] = field(default_factory=list)
    """Milestones read from the board after its goal that could not be placed on the
    session's clock: they keep only the board's own time (`kernel_s`)."""
    units: list[UnitStep] = field(default_factory=list)
    """User space unit by unit: as systemd's status lines show it (`analysis.units`), or, on
    a boot whose console showed none, as systemd recorded it (`kind` "systemd")."""
    systemd: SystemdRecord | None = None
    """systemd's own record of the units, read after login (`analysis.systemd_units`)."""
    bootstage: Bootstage | None = None
    """U-Boot's own stages before the prompt at which bootlab typed `boot`
    (`analysis.bootstage`; None: not read)."""
    ready: str | None = None
    """How a `ready:COMMAND` goal's polls after login placed it, in words
    (`analysis.ready`; None: no such goal)."""
    zero: TimeZero | None = None
    """When bootlab started this boot: a first-byte table counts from it (`phase_rows`)."""
    zero_unknown: str | None = None
    """Why it has no time zero, in words (None: not said, as for a boot being recorded)."""

    @property
    def incomplete(self) -> str | None:
        """Why this boot's numbers are not whole, in words (None: they are)."""
        return None if self.gap is None else self.gap.text()

    def on_console(self) -> Boot:
        """This boot with only the milestones the console showed: for what reads their lines
        (advice, explanations, the clock fit), which a collected dmesg's are not."""
        return replace(self, milestones=[m for m in self.milestones if m.source == "console"])

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
class Rejection:
    """A line that matched a milestone's pattern but was not taken as that milestone."""

    boot: int
    marker: str
    line: int
    text: str
    reason: str


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


def silent_start(boot: Boot) -> str | None:
    """What the table of `boot` says of the time before its first milestone, or None.

    A boot whose first line is already a bootloader's or the kernel's had firmware before it
    that printed nothing (a boot ROM, a silent SPL or TF-A): its time is before the first byte.
    With a time zero (bootlab powered the board on or reset it) that time is measured, as the
    first milestone's elapsed time; without one it is not in the table, and the note says why.
    Unrecognised lines before the first milestone are firmware output: then the first
    milestone's elapsed time includes them.
    """
    if boot.partial or not boot.milestones:
        return None
    first = boot.milestones[0]
    printed = first.line > boot.first_line if boot.text_before is None else boot.text_before
    if first.stage == STAGES[0] or printed:
        return None
    silent = f"the firmware before {first.id} (line {first.line}) printed nothing"
    if boot.zero is not None and first.host_s is not None:
        return (f"{silent}: its {first.host_s - boot.zero.at_s:.3f} s before the first byte "
                f"are measured from time zero ({boot.zero.what})")
    why = f" ({boot.zero_unknown})" if boot.zero_unknown else ""
    return f"{silent}: its time is before the first byte and not in this table{why}"


def choose_clock(boot: Boot) -> Clock:
    """Host time when the stream has it, else the kernel's printk time."""
    if boot.start_host_s is not None or any(m.host_s is not None for m in boot.milestones):
        return "host"
    return "kernel"


def _zero(boot: Boot, reference: str, clock: Clock) -> TimeZero | None:
    """The time zero a first-byte table of `boot` counts from (host clock only)."""
    return boot.zero if reference == "first-byte" and clock == "host" else None


def phase_rows(boot: Boot, reference: str = "first-byte",
               clock: Clock | None = None) -> list[PhaseRow]:
    """The phase table of a boot.

    Args:
        boot: the boot.
        reference: "first-byte" (the boot's start: its time zero when bootlab started it,
            else its first line) or a milestone id.
        clock: which time to use; by default the host clock when present.

    Returns:
        One row per milestone, in order.
    """
    clock = clock or choose_clock(boot)
    if (time_zero := _zero(boot, reference, clock)) is not None:
        zero: float | None = time_zero.at_s
    elif reference == "first-byte":
        zero = boot.start_host_s if clock == "host" else 0.0
    else:
        ref = boot.reached(reference)
        zero = ref.time(clock) if ref else None
    times = [m.time(clock) for m in boot.milestones]
    gap = boot.gap if clock == "host" else None
    side: list[bool | None] = []
    zero_side: bool | None = None
    if gap is not None:
        # No total and no phase across the gap: a time on one side of it from a time on the
        # other is left blank; with the start lost, so is every time from the first byte.
        cut = float("-inf") if gap.start_lost else gap.at_s
        side = [None if m.host_s is None else m.host_s > cut for m in boot.milestones]
        if reference == "first-byte":
            zero_side = None if gap.start_lost else False
        elif (ref_milestone := boot.reached(reference)) is not None \
                and ref_milestone.host_s is not None:
            zero_side = ref_milestone.host_s > cut
    rows = []
    for i, milestone in enumerate(boot.milestones):
        t = times[i]
        prev = times[i - 1] if i else zero
        nxt = times[i + 1] if i + 1 < len(times) else None
        elapsed = None if t is None or zero is None else t - zero
        delta = None if t is None or prev is None else t - prev
        duration = None if t is None or nxt is None else nxt - t
        if gap is not None:
            after = side[i]
            if after is None or after != zero_side:
                elapsed = None
            if after is None or (side[i - 1] if i else zero_side) != after:
                delta = None
            if after is None or (i + 1 < len(side) and side[i + 1] != after):
                duration = None
        rows.append(PhaseRow(milestone, elapsed, delta, duration))
    return rows


def axis_zero(rows: Sequence[PhaseRow]) -> float | None:
    """The host time a table's elapsed column counts from (None: it has no host times)."""
    for row in rows:
        if row.milestone.host_s is not None and row.elapsed_s is not None:
            return row.milestone.host_s - row.elapsed_s
    return None


def table_rows(boot: Boot, reference: str = "first-byte",
               clock: Clock | None = None) -> list[PhaseRow]:
    """`phase_rows` as a table shows them: counted from time zero, its own row comes first
    (`ZERO_ID` at 0.000, naming what bootlab did), so the phase before the first byte is a
    row's duration like any other."""
    clock = clock or choose_clock(boot)
    rows = phase_rows(boot, reference, clock)
    zero = _zero(boot, reference, clock)
    if zero is None or not rows:
        return rows
    marker = Milestone(ZERO_ID, "time zero", STAGES[0], 0, zero.what, zero.at_s, None, None, {},
                       boot=boot.index, source=ZERO_SOURCE)
    return [PhaseRow(marker, 0.0, None, rows[0].elapsed_s), *rows]


@dataclass(frozen=True, slots=True)
class _Armed:
    """A fallback waiting for its line, and the stages whose own lines withdraw it."""

    marker: Marker
    window: range
    after_kernel_line: bool = False
    """Fire only once a line with a printk time came: set when firmware the bootloader started
    with the kernel (OpenSBI, OP-TEE) printed after the hand-off, so its own lines are not
    taken for user space's."""


class PhaseTracker:
    """Turns marker hits, line by line, into boots and milestones."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.boots: list[Boot] = []
        self.rejected: list[Rejection] = []
        self._armed: dict[str, _Armed] = {}
        self._fired: dict[str, _Armed] = {}
        """Fallback milestones placed in the current boot, with the stages that withdraw them."""
        self._context: dict[str, Values] = {}
        self._passed: dict[str, list[tuple[ParsedLine, Values, Hit]]] = {}
        """Hits passed over because an earlier one counted, kept for markers with `recheck`:
        when a recheck shows the earlier one was not it, the next of these takes its place."""
        self._seen_partial: set[tuple[str, int]] = set()
        self._restart = False
        """The last milestone restarted the board: the next line starts a new boot."""

    @property
    def armed(self) -> bool:
        """Every line must be fed, not only those with hits (a fallback or a restart waits)."""
        return bool(self._armed) or self._restart

    @property
    def current(self) -> Boot | None:
        """The boot being tracked."""
        return self.boots[-1] if self.boots else None

    def _new_boot(self, boot: Boot | None, line: ParsedLine) -> Boot:
        if boot is not None:
            self._close(boot)
        new = Boot(boot.index + 1 if boot else 1, line.number, line.host_s, line.offset)
        self.boots.append(new)
        self._armed.clear()
        self._fired.clear()
        self._context.clear()
        self._passed.clear()
        return new

    def _close(self, boot: Boot) -> None:
        """A capture's first boot that showed nothing before user space (a login prompt, a
        shell, a shutdown) was the end of a boot that began before the capture: its
        milestones are not a boot's timeline and are dropped (its restart line stays)."""
        others = [m for m in boot.milestones if not self.profile.by_id[m.id].ends_boot]
        if boot.index == 1 and all(STAGES.index(m.stage) >= _USERSPACE or m.fallback
                                   for m in others):
            boot.partial = True
            boot.milestones[:] = [m for m in boot.milestones if m not in others]

    def _boot_for(self, line: ParsedLine, hits: list[tuple[Marker, Hit]]) -> Boot:
        boot = self.current
        if boot is None:
            return self._new_boot(None, line)
        if self._restart and line.message.strip():
            # the next boot starts at its first byte: the first line after the restart that
            # holds anything (the kernel's own line ends may follow its last message)
            self._restart = False
            return self._new_boot(boot, line)
        for marker, hit in hits:
            if not marker.new_boot or hit.kind != "match" or not boot.milestones:
                continue
            previous = boot.reached(marker.id)
            # firmware the bootloader may start with the kernel (`late`) is a new boot only
            # after the kernel's own lines
            later = max(marker.stage_index, _BOOTLOADER) if marker.late else marker.stage_index
            again = previous is not None and previous.pattern == hit.pattern \
                and not marker.repeats
            if again or any(
                    STAGES.index(m.stage) > later for m in boot.milestones
                    if self._proves_stage(m)):
                return self._new_boot(boot, line)
        return boot

    def _proves_stage(self, milestone: Milestone) -> bool:
        """Whether reaching `milestone` shows the boot got to its stage: not a provisional
        fallback (see _withdraw), a weak line, a line other stages print too (`shared`), or a
        restart that did not end the boot (firmware resetting itself, see _restarts)."""
        marker = self.profile.by_id[milestone.id]
        return not (milestone.fallback or milestone.weak or marker.shared or marker.ends_boot)

    def start(self, line: ParsedLine) -> None:
        """Open the first boot at the stream's first line, so the reference is the first byte."""
        if not self.boots:
            self.boots.append(Boot(1, line.number, line.host_s, line.offset))

    def feed(self, line: ParsedLine, hits: list[tuple[Marker, Hit]],
             partial: bool = False) -> list[Milestone]:
        """Apply one line's hits; return the milestones it reached.

        Args:
            line: the line.
            hits: markers whose patterns matched it, with what they found.
            partial: the line is still arriving (only `partial` markers are in `hits`).
        """
        boot = self._boot_for(line, hits)
        reached: list[Milestone] = []
        for marker, hit in hits:
            if hit.kind == "context":
                self._context[marker.id] = hit.values
                continue
            key = (marker.id, line.number)
            if key in self._seen_partial:
                if not partial:
                    self._complete(boot, marker.id, line, hit.values)
                continue
            values = {**self._context.pop(marker.id, {}), **hit.values}
            if hit.kind == "recheck":
                reached += self._recheck(boot, marker, line, values)
                continue
            refusal = marker.refuses(values) or self._too_late(boot, marker, hit)
            if refusal is not None:
                self._reject(boot, marker, line, refusal)
                continue
            if partial:
                self._seen_partial.add(key)
            why_not = self._take(boot, marker, hit)
            if why_not is not None:
                self._reject(boot, marker, line, why_not)
                if marker.recheck and len(self._passed.setdefault(marker.id, [])) < 16:
                    self._passed[marker.id].append((line, values, hit))
                continue
            reached.append(self._record(boot, marker, line, values, hit))
            self._armed.pop(marker.id, None)
        if not partial:
            self._withdraw(boot, reached)
            if self._armed:
                reached += self._fallbacks(boot, line, hits)
        for milestone in list(reached):
            self._take_back(boot, milestone)
            self._arm_after(boot, milestone.id)
            if self.profile.by_id[milestone.id].ends_boot and self._restarts(boot):
                self._restart = True
        return reached

    def _restarts(self, boot: Boot) -> bool:
        """Whether a restart line ends `boot`: only once the boot got past its firmware. A
        restart before anything else is this boot's start (a measured boot's session begins
        with the `reset` or `reboot -f` bootlab typed); one while only firmware ran is a ROM
        or SPL resetting itself for an erratum, the same boot."""
        others = [m for m in boot.milestones if not self.profile.by_id[m.id].ends_boot]
        return bool(others) and not all(m.stage == STAGES[0] for m in others)

    def _take_back(self, boot: Boot, reached: Milestone) -> None:
        """Milestones that never come before `reached` (`not_before`) and did: their line was
        something else."""
        for marker in self.profile.markers:
            placed = boot.reached(marker.id) if reached.id in marker.not_before else None
            if placed is not None and placed.line < reached.line:
                boot.milestones.remove(placed)
                self._reject(boot, marker, ParsedLine(placed.line, placed.text, "", None, None,
                                                      None),
                             f"it came before {reached.id} (line {reached.line})")

    def _too_late(self, boot: Boot, marker: Marker, hit: Hit) -> str | None:
        """Why a hit is not this boot's, or None: a firmware or bootloader line after the
        kernel started (a banner would have started a new boot), a kernel line once the boot
        reached its prompt (a shell printing /proc/version, a late module)."""
        if (marker.new_boot and hit.kind == "match") or marker.fail \
                or marker.stage_index > _KERNEL:
            return None
        if marker.stage_index == _KERNEL:
            prompt = next((m for m in boot.milestones if m.id in _PROMPTS), None)
            return None if prompt is None else \
                f"the boot had reached its {prompt.id} prompt (line {prompt.line})"
        started = next((m for m in boot.milestones
                        if STAGES.index(m.stage) > _BOOTLOADER and self._proves_stage(m)), None)
        return None if started is None else f"the kernel had started (line {started.line})"

    def _recheck(self, boot: Boot, marker: Marker, line: ParsedLine,
                 values: Values) -> list[Milestone]:
        """A later line (an image header and its context) may show the milestone's line held
        something else: a ramdisk whose size, with or without its 64-byte legacy header, is
        the load's. Then the next hit passed over after it takes its place."""
        placed = boot.reached(marker.id)
        size = values.get("bytes")
        if placed is None or marker.refuses(values) is None or not isinstance(size, int):
            return []
        if placed.values.get("bytes") not in (size, size + 64):
            return []
        boot.milestones.remove(placed)
        self._reject(boot, marker, ParsedLine(placed.line, placed.text, "", None, None, None),
                     f"line {line.number} shows it held {values.get('load', 'something else')}")
        for later, later_values, hit in self._passed.pop(marker.id, []):
            if later.number > placed.line and marker.refuses(later_values) is None:
                milestone = self._record(boot, marker, later, later_values, hit)
                boot.milestones.remove(milestone)
                at = next((i for i, m in enumerate(boot.milestones) if m.line > later.number),
                          len(boot.milestones))
                boot.milestones.insert(at, milestone)
                return [milestone]
        return []

    def _reject(self, boot: Boot, marker: Marker, line: ParsedLine, reason: str) -> None:
        if len(self.rejected) < REJECTED_LIMIT:
            self.rejected.append(Rejection(boot.index, marker.id, line.number, line.text,
                                           reason))

    @staticmethod
    def _complete(boot: Boot, marker_id: str, line: ParsedLine, values: Values) -> None:
        """A prompt seen while arriving is now complete: keep its time, take its final text."""
        for i, milestone in enumerate(boot.milestones):
            if milestone.id == marker_id and milestone.line == line.number:
                boot.milestones[i] = replace(milestone, text=line.text, values=values)

    def _take(self, boot: Boot, marker: Marker, hit: Hit) -> str | None:
        """Why a hit of `marker` is not recorded (per its `occurrence` rule and weak/match),
        or None when it is (a weak milestone it replaces, or a `last` one it moves, is
        removed here)."""
        previous = boot.reached(marker.id)
        if previous is None or marker.occurrence == "every":
            return None
        if hit.kind == "weak":
            return f"already placed at line {previous.line}"
        if previous.weak:
            boot.milestones.remove(previous)
            return None
        if marker.occurrence == "first":
            return f"the first one counts (line {previous.line})"
        order = self.profile.order
        start = boot.milestones.index(previous)
        later = [m for m in boot.milestones[start + 1:] if order.get(m.id, -1) > order[marker.id]]
        if later:
            return f"{later[0].id} was reached after the last one (line {previous.line})"
        boot.milestones.remove(previous)
        return None

    def _withdraw(self, boot: Boot, reached: list[Milestone]) -> None:
        """Fallback milestones placed while the console looked quiet are taken back when the
        kernel's own lines show up after them: the line they took was not user space's."""
        for marker_id, armed in list(self._fired.items()):
            skip = armed.marker.fallback.skip if armed.marker.fallback else ()
            stages = {STAGES.index(m.stage) for m in reached
                      if not m.fallback and not m.weak and m.id not in skip}
            firmware = 0 in stages
            if stages & set(armed.window) or firmware:
                del self._fired[marker_id]
                boot.milestones[:] = [m for m in boot.milestones
                                      if not (m.id == marker_id and m.fallback)]
                if firmware and not stages & set(armed.window):
                    # firmware started with the kernel printed: wait for the kernel's lines
                    self._armed[marker_id] = replace(armed, after_kernel_line=True)

    def _fallbacks(self, boot: Boot, line: ParsedLine,
                   hits: list[tuple[Marker, Hit]]) -> list[Milestone]:
        """Fire or cancel the armed fallbacks on this line.

        A fallback is cancelled by the milestone's own stage showing up by its own lines (then
        the console is not quiet and the real line will come); it fires on the first non-blank
        line that is not the kernel's (no printk time, not one of `kernel_lines`) and is not
        one of the `skip` milestones.
        """
        fired = []
        user_line: bool | None = None
        for marker_id, armed in list(self._armed.items()):
            marker = armed.marker
            assert marker.fallback is not None
            skip = set(marker.fallback.skip)
            if any(m.stage_index in armed.window for m, hit in hits
                   if m.id not in skip and hit.kind == "match"):
                del self._armed[marker_id]
                continue
            if armed.after_kernel_line:
                if line.kernel_s is not None:
                    self._armed[marker_id] = replace(armed, after_kernel_line=False)
                continue
            if any(m.id in skip or m.stage_index == 0 for m, _ in hits):
                continue
            if user_line is None:
                # where the kernel stamps its lines, an unstamped line is user space's whatever
                # it says ("mount: mounting none on /dev failed" is BusyBox's, not the kernel's)
                stamped = any(m.kernel_s is not None for m in boot.milestones
                              if m.stage == "kernel")
                user_line = bool(line.message.strip()) and line.kernel_s is None and (
                    stamped or not self.profile.kernel_line(line.message))
            if not user_line:
                continue
            del self._armed[marker_id]
            if armed.window:
                self._fired[marker_id] = armed
            fired.append(self._record(boot, marker, line, {}, None))
        return fired

    def _arm_after(self, boot: Boot, marker_id: str) -> None:
        after = self.profile.by_id[marker_id]
        for marker in self.profile.markers:
            if (marker.fallback and marker_id in marker.fallback.after
                    and boot.reached(marker.id) is None):
                # Only what `quiet` hides cancels: the kernel's own lines (stages after
                # `after` and before user space). User-space output shows init has started.
                window = range(after.stage_index + 1,
                               min(marker.stage_index, _USERSPACE - 1) + 1)
                self._armed[marker.id] = _Armed(marker, window)

    @staticmethod
    def _record(boot: Boot, marker: Marker, line: ParsedLine, values: Values,
                hit: Hit | None) -> Milestone:
        milestone = Milestone(marker.id, marker.title, marker.stage, line.number, line.text,
                              line.host_s, line.kernel_s, line.boot_s, values, hit is None,
                              marker.fail, boot.index, -1 if hit is None else hit.pattern,
                              hit is not None and hit.kind == "weak", line.offset)
        boot.milestones.append(milestone)
        return milestone
