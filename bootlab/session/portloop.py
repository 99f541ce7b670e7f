"""The one loop that takes a port's events into a recording.

A stamping reader yields what happened on the port: bytes with the time their first byte
arrived, idle ticks, the port going away and coming back. Whatever reads a port (`bootlab
record`, the app's live link, board control's console) records those the same way here, so a
gap is a gap in every session file, whichever front end wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from bootlab.core.recording.recorder import Recorder
from bootlab.transports.reader import Chunk, Event, Gap, Idle, Reconnected


def record_event(recorder: Recorder, event: Event) -> bytes:
    """Takes one port event into the recording; returns the bytes it carried (b"" for none).

    Bytes are fed at their first byte's time; an idle tick lets time-outs and prompts end;
    a gap marks the boot being recorded incomplete, and a reconnection says how long the port
    was away."""
    match event:
        case Chunk(data, t_ns):
            recorder.feed(data, t_ns)
            return data
        case Idle(t_ns):
            recorder.feed(b"", t_ns)
        case Gap(t_ns, reason):
            recorder.lost(t_ns, reason)
        case Reconnected(t_ns, lost_ns):
            recorder.back(t_ns, lost_ns)
    return b""


def recorded(events: Iterable[Event], recorder: Recorder,
             tell: Callable[[Gap | Reconnected], object] | None = None,
             ) -> Iterator[tuple[bytes, int]]:
    """Each event taken into `recorder`, then yielded as (bytes, t_ns) (b"" when it carried
    none); `tell` hears of each gap and reconnection after it is recorded."""
    for event in events:
        data = record_event(recorder, event)
        if tell is not None and isinstance(event, Gap | Reconnected):
            tell(event)
        yield data, event.t_ns
