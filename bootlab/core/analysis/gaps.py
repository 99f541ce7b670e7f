"""Gaps in a recording, and the boots they leave incomplete.

A boot's numbers count only when every byte between its first line and its last milestone was
received: a reconnect (a lost port, an unplugged adapter, a place whose coordinator went away)
leaves a gap whose bytes are gone, so a phase across it, or a total from a first byte the gap
may have swallowed, would be measured short. The recorder keeps a session's gaps in its
`gaps` meta (older sessions: their `gap` and `reconnect` events); `mark` sets each boot's
`gap`, and the phase table, `compare`, the A/B statistics, budgets and the app leave what it
touches out, saying why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bootlab.core.analysis.phases import Boot, BootGap
from bootlab.core.analysis.profiles import STAGES


def session_gaps(meta: Mapping[str, Any], events: Iterable[Mapping[str, Any]] = ()
                 ) -> list[BootGap]:
    """The gaps a session records: its `gaps` meta, else its `gap`/`reconnect` events (times
    in seconds since the session's start)."""
    recorded = meta.get("gaps")
    if isinstance(recorded, list):
        return [BootGap(float(g["t"]), None if g.get("s") is None else float(g["s"]),
                        str(g.get("why") or "the port was lost"))
                for g in recorded if isinstance(g, dict) and isinstance(g.get("t"), int | float)]
    found: list[BootGap] = []
    for event in events:
        kind, t = event.get("event"), event.get("t")
        if not isinstance(t, int):
            continue
        if kind == "gap":
            found.append(BootGap(t / 1e9, None, str(event.get("reason") or "the port was lost")))
        elif kind == "reconnect" and found and found[-1].seconds is None:
            gap_s = event.get("gap_s")
            found[-1] = BootGap(found[-1].at_s, float(gap_s) if isinstance(gap_s, int | float)
                                else t / 1e9 - found[-1].at_s, found[-1].why)
    return found


def _starts_boot(boot: Boot) -> bool:
    """The boot's first line (blank lines aside) is its first milestone, a firmware's or a
    bootloader's: its beginning was received."""
    first = boot.milestones[0] if boot.milestones else None
    if first is None or first.stage not in STAGES[:2]:
        return False
    return not boot.text_before if boot.text_before is not None else \
        first.line == boot.first_line


def mark(boots: Sequence[Boot], gaps: Sequence[BootGap]) -> None:
    """Set `gap` on each boot a gap falls in, or that begins after a gap without showing its
    own beginning (its start may be in the gap)."""
    starts = [b.start_host_s for b in boots]
    for gap in gaps:
        for index, boot in enumerate(boots):
            start = starts[index]
            end = starts[index + 1] if index + 1 < len(boots) else None
            if start is None or boot.partial:
                continue
            if start <= gap.at_s and (end is None or gap.at_s < end):
                boot.gap = boot.gap or gap
                break
            if gap.at_s < start:
                if not _starts_boot(boot):
                    boot.gap = boot.gap or BootGap(gap.at_s, gap.seconds, gap.why, True)
                break
