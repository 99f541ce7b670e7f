"""A goal in systemd's journal: the boot is done when the application logs a message.

`--until "journal:REGEX"`: after the login prompt bootlab logs in and asks the journal of this
boot for the first message matching REGEX (`journalctl -b -g`), again and again until one
comes, with the board's monotonic clock read before and after (`/proc/uptime`, each read
bracketed by the host's clock) and the kernel's clocksource. The session keeps them as a
`collected` event (`"source": "journal"`).

The message's time is the journal's own (its monotonic timestamp, when journald received it),
placed on the session's clock as systemd's record is (`boardclock`): only when the two clock
reads show the clock kept the host's time and the kernel did not count timer ticks, and within
±50 ms; otherwise it stays on the board's clock, said, and the goal has no time in the table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bootlab.core.analysis.boardclock import JOIN_LIMIT_MS, judge, read_anchors
from bootlab.core.analysis.collected import collected_dmesg
from bootlab.core.analysis.phases import Milestone
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.analysis.ready import JOURNAL_PREFIX, join
from bootlab.core.analysis.systemd_units import UPTIME_GRAIN_S
from bootlab.core.capture.sources import Source

SOURCE = "journal"
"""The `collected` event's source, and the milestone's."""
LINE = re.compile(r"^\[\s*(\d+\.\d+)\]\s?(.*)$")
"""A `journalctl -o short-monotonic` line: its monotonic time, then the message."""


def place(event: Mapping[str, Any], dmesg: str = "") -> tuple[Milestone | None, str]:
    """The `journal:` milestone a collected `journal` event gives (None: none, untimed or
    unplaced), and what it says in words. `dmesg`: the boot's collected kernel log, which
    says which clock the kernel ended on (else the event's `clocksource`)."""
    pattern = str(event.get("pattern") or "")
    found = LINE.match(str(event.get("line") or ""))
    polls = event.get("polls") if isinstance(event.get("polls"), int) else 0
    if found is None:
        why = event.get("why")
        return None, (f"no journal message of this boot matched /{pattern}/ in {polls} asks "
                      f"after login" + (f": {why}" if why else ""))
    board_s, message = float(found.group(1)), found.group(2).strip()
    said = f"the journal logged `{message[:80]}` at {board_s:.3f} s on the board's clock"
    clocksource = str(event.get("clocksource") or "")
    anchors = read_anchors(event.get("uptime"), "s", 1.0, UPTIME_GRAIN_S, "uptime read")
    if not anchors:
        return None, f"{said}; not placed: the board's monotonic clock was not read"
    clock = judge(anchors, dmesg or f"clocksource: Switched to clocksource {clocksource}",
                  bracketed=True)
    if not clock.keeps_time:
        return None, f"{said}; not placed: {clock.why}"
    placed = clock.place(board_s)
    if placed is None:
        return None, (f"{said}; not placed: the clock reads do not pin it within "
                      f"±{JOIN_LIMIT_MS:.0f} ms")
    milestone = Milestone(f"{JOURNAL_PREFIX}{pattern}", f"journal: {pattern}", "userspace", 0,
                          message, placed[0], None, None, {}, source=SOURCE,
                          uncertainty_ms=placed[1])
    return milestone, f"{said}, placed within ±{placed[1]:.1f} ms ({clock.why})"


def journal_events(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The journal goal's asks a session's events hold."""
    return [e for e in events if e.get("event") == "collected" and e.get("source") == SOURCE]


def add_journal_goal(analysis: Analysis, source: Source) -> None:
    """Join each journal goal's answer to the boot it was asked after (`ready.join`)."""
    events = source.session.events if source.session is not None else ()
    dmesg = collected_dmesg(events)
    for event in journal_events(events):
        join(analysis, event, place(event, str(dmesg.get("text") or "") if dmesg else ""))
