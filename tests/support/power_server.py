"""A network power switch for labgrid's `simplerest` power model, serving boards of ours.

labgrid's simplerest backend (labgrid/driver/power/simplerest.py) switches with an HTTP GET of
its `host` template with `{index}` and `{value}` filled in (`/relay/0/1` on, `/relay/0/0`
off) and reads the state with a GET of the template with an empty value and the trailing slash
cut (`/relay/0`), answered `1` or `0`. This server answers exactly that, for the outlets it is
given (index -> a board with `on()` and `off()`), and counts the switches. A switch answers
once the board has done it: off means the board's process has ended.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol


class Outlet(Protocol):
    """What the switch powers."""

    def on(self) -> None:
        """Power on (already on: nothing)."""

    def off(self) -> None:
        """Power off (already off: nothing)."""


class PowerServer:
    """The switch on 127.0.0.1, on a free port, in a thread of this process."""

    def __init__(self, outlets: Mapping[int, Outlet]) -> None:
        self.outlets = dict(outlets)
        self.state = dict.fromkeys(self.outlets, False)
        self.switches: list[tuple[int, bool]] = []
        """Every switch asked for, in order: (index, on)."""
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                code, body = server.request(self.path)
                self.send_response(code)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: object) -> None:
                return

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        self._thread = threading.Thread(target=self.http.serve_forever, daemon=True,
                                        name="power server")
        self._thread.start()

    @property
    def template(self) -> str:
        """The NetworkPowerPort `host` for simplerest."""
        return f"http://127.0.0.1:{self.port}/relay/{{index}}/{{value}}"

    def request(self, path: str) -> tuple[int, bytes]:
        """(HTTP status, body) for a GET of `path`."""
        parts = path.strip("/").split("/")
        if len(parts) not in (2, 3) or parts[0] != "relay" or not parts[1].isdigit():
            return 404, b"no such outlet\n"
        index = int(parts[1])
        if index not in self.outlets:
            return 404, b"no such outlet\n"
        if len(parts) == 2:
            return 200, b"1" if self.state[index] else b"0"
        if parts[2] not in ("0", "1"):
            return 400, b"value must be 0 or 1\n"
        on = parts[2] == "1"
        with self._lock:
            self.switches.append((index, on))
            try:
                self.outlets[index].on() if on else self.outlets[index].off()
            except Exception as error:  # the board did not start: the switch says so
                return 500, f"{error}\n".encode()
            self.state[index] = on
        return 200, b"1" if on else b"0"

    def close(self) -> None:
        """Stop serving and power every outlet off."""
        self.http.shutdown()
        self.http.server_close()
        for outlet in self.outlets.values():
            outlet.off()
