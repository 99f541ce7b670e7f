"""The reference console for bench_tui.py: the least a Textual serial console does.

    .venv/bin/python bench/tui_reference.py PORT

A thread reads the port (os.read on the raw device, as the serialbench reference reader does)
and posts what it read at most every 1/30 s; Textual's own `Log` widget (max_lines 100,000)
shows it. It records nothing, matches nothing and has one pane, so under the same flood and
the same keys it gives the figures any Textual console would get on this machine. The keys
bench_tui.py times behave as bootlab's do: Ctrl-T t changes the border title through the same
time-column names, Ctrl-T / opens a search bar ("Enter finds ..."), Escape closes it,
Ctrl-T q quits.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
import tty
from typing import ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input, Log, Static

TITLES = ("elapsed", "delta", "clock", "printk")
BATCH_S = 1 / 30


class Read(Message):
    """Lines read since the last batch."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines


class ReferenceConsole(App[None]):
    """One Log pane fed by a reader thread; a search bar; the bench's keys."""

    CSS: ClassVar[str] = "Log { border: round $accent; height: 1fr; } Input { display: none; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+t", "escape_key", priority=True),
        Binding("escape", "close_search", priority=True)]

    def __init__(self, port: str) -> None:
        super().__init__()
        self.port = port
        self.mode = 0
        self.escape = False

    def compose(self) -> ComposeResult:
        yield Log(max_lines=100_000)
        yield Input(placeholder="search the log: Enter finds, Esc closes")
        yield Static("connecting")

    def on_mount(self) -> None:
        self.query_one(Log).border_title = f"console · {TITLES[0]}"
        fd = os.open(self.port, os.O_RDONLY | os.O_NOCTTY)
        tty.setraw(fd)
        self.query_one(Static).update(f"{self.port} connected")
        threading.Thread(target=self._read, args=(fd,), daemon=True).start()

    def _read(self, fd: int) -> None:
        pending = b""
        lines: list[str] = []
        last = time.monotonic()
        while True:
            if select.select([fd], [], [], BATCH_S)[0]:
                data = os.read(fd, 1 << 16)
                if not data:
                    return
                *done, pending = (pending + data).split(b"\n")
                lines += (line.decode("utf-8", "replace") for line in done)
            if lines and time.monotonic() - last >= BATCH_S:
                self.post_message(Read(lines))
                lines, last = [], time.monotonic()

    def on_read(self, message: Read) -> None:
        self.query_one(Log).write_lines(message.lines)

    def action_escape_key(self) -> None:
        self.escape = True

    def action_close_search(self) -> None:
        self.query_one(Input).display = False
        self.query_one(Log).focus()

    def on_key(self, event: events.Key) -> None:
        if not self.escape:
            return
        self.escape = False
        event.stop()
        if event.character == "t":
            self.mode = (self.mode + 1) % len(TITLES)
            self.query_one(Log).border_title = f"console · {TITLES[self.mode]}"
        elif event.character == "/":
            search = self.query_one(Input)
            search.display = True
            search.focus()
        elif event.character == "q":
            self.exit()


if __name__ == "__main__":
    ReferenceConsole(sys.argv[1]).run()
