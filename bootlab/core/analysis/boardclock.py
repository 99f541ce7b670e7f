"""A board's own clock (printk time) placed on the session's host clock, with a bound.

What the board tells after its goal (its dmesg) carries the board's clock, not the host's. It is
placed by anchors: lines whose host arrival is when the board printed them (the sync lines
bootlab writes to /dev/kmsg on an idle console, and kernel lines the console showed after an
idle link, not queued behind others), each with its board time and host time.

Between anchors the board's clock is bounded, never assumed: it gains no more than `DRIFT` on
the host (no clock runs fast by more than a crystal's tolerance), and, where it is shown to keep
time, loses no more than that either. One the anchors show losing time may lose any amount: a
time is then only bracketed by the anchors either side of it. One they show gaining more than
`DRIFT`, between any two of them, breaks the bound everything rests on: nothing is placed on
it. A clock counted in timer ticks (`clocksource jiffies`, as when an emulator's TSC is
marked unstable) is bounded by nothing: late ticks lose time, and an emulator that delivers
them later in a burst (QEMU's lost-tick policy) makes it catch up faster than the host's, so
no time on it is placed. Each placed time is the middle of what the bounds allow, ± half its
width; one the bounds cannot pin within `JOIN_LIMIT_MS` is not placed at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

DRIFT = 2e-4
"""How far a board clock that keeps time may run from the host's: 200 ppm, twice a common
crystal's tolerance."""
JOIN_LIMIT_MS = 50.0
"""A time the anchors cannot pin closer than ± this is not a measurement: it stays on the
board's own clock."""
_SWITCHED = re.compile(r"clocksource: Switched to clocksource (\S+)")
TICK_CLOCKS = ("jiffies", "refined-jiffies")
"""Clocksources that count timer ticks, which lose time whenever a tick is late."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """A moment both clocks saw: its board time, and the host time by which it had happened
    (a line's arrival), with how much earlier it may have happened (`early_s`: the read's
    granularity, the adapter's latency and the board's console path)."""

    board_s: float
    host_s: float
    early_s: float
    what: str


@dataclass(frozen=True, slots=True)
class BoardClock:
    """The board's clock on the host's, bounded by anchors."""

    anchors: tuple[Anchor, ...]
    keeps_time: bool
    why: str
    """Why the clock is taken to keep time, or not, in words."""
    bounded: bool = True
    """False for a tick-counted clock: it may run fast too, so no anchor bounds it."""

    def bounds(self, board_s: float) -> tuple[float, float] | None:
        """The host times a board time may fall between (None: no anchor bounds it on one
        side, or the clock is bounded by nothing)."""
        if not self.bounded:
            return None
        low, high = float("-inf"), float("inf")
        for anchor in self.anchors:
            span = board_s - anchor.board_s
            earliest = anchor.host_s - anchor.early_s
            if span >= 0:
                low = max(low, earliest + span * (1 - DRIFT))
                if self.keeps_time:
                    high = min(high, anchor.host_s + span * (1 + DRIFT))
            if span <= 0:
                high = min(high, anchor.host_s + span * (1 - DRIFT))
                if self.keeps_time:
                    low = max(low, earliest + span * (1 + DRIFT))
        if low == float("-inf") or high == float("inf") or low > high:
            return None  # unbounded on a side, or anchors that disagree there
        return low, high

    def place(self, board_s: float) -> tuple[float, float] | None:
        """A board time on the host clock and its uncertainty in ms, or None when the anchors
        cannot pin it within `JOIN_LIMIT_MS`."""
        bounds = self.bounds(board_s)
        if bounds is None:
            return None
        low, high = bounds
        half_ms = max(high - low, 0.0) * 500.0
        return ((low + high) / 2, half_ms) if half_ms <= JOIN_LIMIT_MS else None


def read_anchors(reads: object, key: str, unit_s: float, grain_s: float,
                 what: str) -> list[Anchor]:
    """A board clock read by a command, each read as a moment both clocks saw: the board's
    clock showed `read[key]` (in units of `unit_s`, rounded down to `grain_s`) between the
    command's sending (`sent`, ns) and its answer's return (`back`, ns). Malformed reads are
    skipped."""
    found = []
    for number, read in enumerate(reads if isinstance(reads, list) else (), 1):
        if not isinstance(read, dict) or not isinstance(read.get(key), (int, float)) \
                or not all(isinstance(read.get(k), int) for k in ("sent", "back")):
            continue
        back_s, sent_s = read["back"] / 1e9, read["sent"] / 1e9
        if back_s >= sent_s:
            found.append(Anchor(read[key] * unit_s, back_s, back_s - sent_s + grain_s,
                                f"{what} {number}"))
    return found


def tick_clock(dmesg: str) -> bool:
    """Whether the kernel ended on a clock counted in timer ticks."""
    switched = _SWITCHED.findall(dmesg)
    return bool(switched) and switched[-1] in TICK_CLOCKS


def _on_time(anchors: Sequence[Anchor]) -> tuple[Anchor, ...]:
    """The anchors without those a later one shows arrived late: no clock runs fast, so when
    the board's clock advanced more between two of them than the host's could have, the
    earlier line left the board after its time (its console output deferred)."""
    kept: list[Anchor] = []
    for anchor in anchors:
        while kept and anchor.host_s - (kept[-1].host_s - kept[-1].early_s) \
                < (anchor.board_s - kept[-1].board_s) * (1 - DRIFT):
            kept.pop()
        kept.append(anchor)
    return tuple(kept)


def _disagreeing(ordered: Sequence[Anchor]) -> tuple[tuple[Anchor, Anchor] | None,
                                                     tuple[Anchor, Anchor] | None]:
    """The first pair of anchors (in board time) between which the board's clock gained on
    the host by more than `DRIFT`, and the first between which it lost more; None where none
    did. Every pair is checked, not only neighbours: each anchor's `early_s` lets a neighbour
    pass either way, and such slack adds up over several anchors. One pass suffices: a later
    anchor disagrees with some earlier one exactly when it does with the earlier one whose
    bound, carried forward at the drift's limit, is the tightest."""
    gained = lost = None
    latest: tuple[float, Anchor] | None = None    # the tightest "not before" (a gain beyond)
    earliest: tuple[float, Anchor] | None = None  # the tightest "not after" (a loss beyond)
    for b in ordered:
        if gained is None and latest is not None \
                and b.host_s - b.board_s * (1 - DRIFT) < latest[0]:
            gained = (latest[1], b)
        if lost is None and earliest is not None \
                and b.host_s - b.early_s - b.board_s * (1 + DRIFT) > earliest[0]:
            lost = (earliest[1], b)
        low = b.host_s - b.early_s - b.board_s * (1 - DRIFT)
        if latest is None or low > latest[0]:
            latest = (low, b)
        high = b.host_s - b.board_s * (1 + DRIFT)
        if earliest is None or high < earliest[0]:
            earliest = (high, b)
    return gained, lost


def _pace(a: Anchor, b: Anchor) -> str:
    """How the board's clock ran between two anchors, in words."""
    span, elapsed = b.board_s - a.board_s, b.host_s - a.host_s
    return (f"the board's clock ran at {span / elapsed:.3f}x the host's pace between "
            f"{a.what} and {b.what}" if elapsed > 0 else
            f"the board's clock advanced {span:.3f} s between {a.what} and {b.what}")


def judge(anchors: Sequence[Anchor], dmesg: str, bracketed: bool = False) -> BoardClock:
    """A board clock from its anchors: whether it keeps time, and why said so.

    Anchors shown late by a later one are set aside first (`_on_time`), unless `bracketed`:
    reads of the clock whose answer is known to have come between a command and its reply
    cannot be late, so a clock running fast shows as such. The clock keeps time
    when its kernel did not fall back to a tick-counted clock and every pair of anchors
    agrees with the host within `DRIFT`; at least two anchors must be one second apart for
    that to be checked at all. A clock shown to gain more than that is bounded by nothing.
    """
    ordered = sorted(anchors, key=lambda a: a.board_s)
    kept = tuple(ordered) if bracketed else _on_time(ordered)
    if tick_clock(dmesg):
        return BoardClock(kept, False, "the kernel's clock is counted in timer ticks "
                          "(clocksource jiffies), which lose time whenever a tick is late and "
                          "may catch up in a burst: nothing bounds it", bounded=False)
    gained, lost = _disagreeing(kept)
    if gained is not None:  # faster than any crystal: the bound every time relies on is gone
        return BoardClock(kept, False, _pace(*gained) + ": nothing bounds it", bounded=False)
    if lost is not None:
        return BoardClock(kept, False, _pace(*lost))
    if len(kept) < 2 or kept[-1].board_s - kept[0].board_s < 1.0:
        return BoardClock(kept, False, "too few anchors to check that the board's clock "
                          "keeps time")
    return BoardClock(kept, True, f"it kept the host's time within {DRIFT * 1e6:.0f} ppm "
                      f"on {len(kept)} anchors over {kept[-1].board_s - kept[0].board_s:.1f} s")
