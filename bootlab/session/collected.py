"""What a board told about a boot after its goal (`--collect`), for the front end to show.

The session file holds the board's dmesg as a `collected` event; it is joined to the boot by
loading the file as every command does (`analysis.loading`, `analysis.collected`), and posted
as `events.Collected`: a live board job posts it once the boot's dmesg is read, a replay once
playback passes the event.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bootlab.core.analysis.collected import boot_of, collected_dmesg
from bootlab.core.analysis.journal_goal import journal_events
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.profiles import Profile
from bootlab.core.analysis.ready import ready_events
from bootlab.core.capture.sources import Source, SourceError, open_source
from bootlab.session.events import Collected


def _events(source: Source) -> Sequence[dict[str, Any]]:
    return source.session.events if source.session is not None else ()


def _collected(source: Source) -> dict[str, Any] | None:
    """What the source holds of the board after a boot: its collected dmesg, else the last
    answer of a goal asked after login (`ready:`, `journal:`); None: neither."""
    events = _events(source)
    asked = [*ready_events(events), *journal_events(events)]
    last = max(asked, key=lambda e: e.get("t", 0), default=None)
    return collected_dmesg(events) or (None if last is None else dict(last))


def collected_at(source: Source) -> float | None:
    """When the source's dmesg (or a goal asked after login) was collected, in session
    seconds (None: it holds neither)."""
    event = _collected(source)
    t_ns = event.get("t") if event is not None else None
    return t_ns / 1e9 if isinstance(t_ns, int) else None


def collected_boot(path: Path, profile: Profile) -> Collected | None:
    """The boot of a session file its collected dmesg (or a goal asked after login) was read
    after, joined, as `bootlab analyze` shows it (None: the file holds neither, or cannot be
    read)."""
    try:
        source = open_source(path)
    except SourceError:
        return None
    event = _collected(source)
    if event is None:
        return None
    boot = boot_of(analyze_source(source, profile), event)
    if boot is None or (boot.collected is None and boot.ready is None):
        return None
    return Collected(path.name, boot)
