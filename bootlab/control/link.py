"""A console link over a pyserial port: stamped reads and plain writes."""

from __future__ import annotations

from collections.abc import Iterator

from bootlab.transports.port import open_port, read_chunks


class PortLink:
    """A Link (see bootlab.control.console) on a device path or pyserial URL."""

    def __init__(self, url: str, baud: int) -> None:
        self.url = url
        self.port = open_port(url, baud)
        self.closed = False

    def chunks(self, poll_s: float) -> Iterator[tuple[bytes, int]]:
        """Stamped reads until closed."""
        return read_chunks(self.port, lambda: self.closed, poll_s)

    def write(self, data: bytes) -> None:
        """Send bytes now."""
        self.port.write(data)
        self.port.flush()

    def close(self) -> None:
        """Close the port."""
        self.closed = True
        self.port.close()
