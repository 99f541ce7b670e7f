"""A board-control link over a port read by the stamping reader thread."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from bootlab.core.recording.recorder import Recorder
from bootlab.session.portloop import recorded
from bootlab.transports.reader import StampingReader, default_reconnect


class PortLink:
    """A Link (see bootlab.control.board_console) on a device path, pyserial URL or exec: command.

    A lost port (unplugged adapter, closed socket) is reopened; the gap and the reconnection
    are recorded in the session being written, which makes its boot incomplete.
    """

    def __init__(self, url: str, baud: int, locate: Callable[[], str] | None = None) -> None:
        """Open `url`; a lost port is reopened where `locate` says it is now (default: the
        same URL)."""
        self.url = url
        self.reader = StampingReader(url, baud, reconnect=default_reconnect(url), locate=locate)
        self.closed = False

    def chunks(self, recorder: Recorder, poll_s: float) -> Iterator[tuple[bytes, int]]:
        """Stamped reads until closed, each recorded first (the session's one port loop);
        (b"", t) while idle, and at gaps and reconnections."""
        return recorded(self.reader.events(lambda: self.closed, poll_s), recorder)

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
