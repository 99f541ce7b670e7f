"""A console link over a port read by the stamping reader thread."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from bootlab.transports.reader import Chunk, Gap, Reconnected, StampingReader, default_reconnect


class PortLink:
    """A Link (see bootlab.control.board_console) on a device path, pyserial URL or exec: command.

    A lost port (unplugged adapter, closed socket) is reopened; `on_event` hears of the gap and
    the reconnection so they can be recorded.
    """

    def __init__(self, url: str, baud: int, locate: Callable[[], str] | None = None) -> None:
        """Open `url`; a lost port is reopened where `locate` says it is now (default: the
        same URL)."""
        self.url = url
        self.reader = StampingReader(url, baud, reconnect=default_reconnect(url), locate=locate)
        self.on_event: Callable[[Gap | Reconnected], None] | None = None
        self.closed = False

    def chunks(self, poll_s: float) -> Iterator[tuple[bytes, int]]:
        """Stamped reads until closed; (b"", t) while idle, and at gaps and reconnections."""
        for event in self.reader.events(lambda: self.closed, poll_s):
            if isinstance(event, Chunk):
                yield event.data, event.t_ns
                continue
            if self.on_event is not None and isinstance(event, Gap | Reconnected):
                self.on_event(event)
            yield b"", event.t_ns

    def write(self, data: bytes) -> None:
        """Send bytes now."""
        self.reader.write(data)

    def set_line(self, name: str, value: bool | int) -> None:
        """Set the baud rate or a modem line (dtr, rts)."""
        self.reader.set_line(name, value)

    def close(self) -> None:
        """Stop reading and close the port."""
        self.closed = True
        self.reader.close()
