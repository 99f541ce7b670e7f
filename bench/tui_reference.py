"""The reference console for bench_tui.py: the least a Textual serial console does.

    .venv/bin/python bench/tui_reference.py PORT

A thread reads the port (os.read on the raw device, as the serialbench reference reader does)
and posts what it read at most every 1/30 s; Textual's own `Log` widget (max_lines 100,000)
shows it. It records nothing, matches nothing and has one pane, so under the same flood and
the same keys it gives the figures any Textual console would get on this machine. The keys
bench_tui.py times behave as bootlab's do: Ctrl-T t changes the border title through the same
time-column names, Ctrl-T / opens a search bar ("Enter finds ..."), Escape closes it,
Ctrl-T q quits. For the screens bench_tui.py opens and closes, each the least Textual does for
such a screen: Ctrl-T ? a help box over the console (a `ModalScreen` with one `Static` of a
key table, titled "bootlab keys"), F2 a screen of its own ("sessions in ...", an empty
`DataTable`), Ctrl-T p Textual's command palette; Escape closes each.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
import tty
from typing import ClassVar

from rich.table import Table
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, Log, Static

TITLES = ("elapsed", "delta", "clock", "printk")
BATCH_S = 1 / 30


class Read(Message):
    """Lines read since the last batch."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines


class KeysBox(ModalScreen[None]):
    """The help: a key table in a scrollable box over the console, as bootlab's."""

    DEFAULT_CSS: ClassVar[str] = """
    KeysBox { align: center middle; }
    KeysBox > VerticalScroll { width: 84; max-width: 100%; height: 90%;
                               border: round $primary; background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss")]

    def compose(self) -> ComposeResult:
        """The key table in its box."""
        table = Table.grid(padding=(0, 2))
        table.add_column(justify="right", style="bold", no_wrap=True)
        table.add_column()
        for key, text in (("Ctrl-T t", "cycle the time column"), ("Ctrl-T /", "search"),
                          ("Ctrl-T p", "command palette"), ("F2", "sessions screen"),
                          ("Ctrl-T ?", "keys (this help)"), ("Ctrl-T q", "quit")):
            table.add_row(key, text)
        with VerticalScroll() as box:
            box.border_title = "bootlab keys"
            box.border_subtitle = "Esc closes"
            yield Static(table)


class SessionsList(Screen[None]):
    """A screen of its own over the console: a title and an (empty) table of sessions."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen")]

    def compose(self) -> ComposeResult:
        """The title and the table."""
        yield Static(f"sessions in {os.getcwd()} · 0 · no baseline · Enter replays")
        table: DataTable[str] = DataTable(cursor_type="row")
        table.add_columns("session", "label", "board", "total s")
        yield table


class ReferenceConsole(App[None]):
    """One Log pane fed by a reader thread; a search bar; the bench's keys."""

    CSS: ClassVar[str] = "Log { border: round $accent; height: 1fr; } #search { display: none; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+t", "escape_key", priority=True),
        Binding("escape", "close_search", priority=True),
        Binding("f2", "sessions")]

    def __init__(self, port: str) -> None:
        super().__init__()
        self.port = port
        self.mode = 0
        self.escape = False
        self.lines = Log(max_lines=100_000)
        """The console (kept: `query_one` looks only at the screen on top)."""
        self.search = Input(placeholder="search the log: Enter finds, Esc closes", id="search")

    def compose(self) -> ComposeResult:
        yield self.lines
        yield self.search
        yield Static("connecting")

    def on_mount(self) -> None:
        self.lines.border_title = f"console · {TITLES[0]}"
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
        self.lines.write_lines(message.lines)

    def action_escape_key(self) -> None:
        self.escape = True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape closes the search bar on the console, the screen over it elsewhere."""
        return action != "close_search" or len(self.screen_stack) == 1

    def action_sessions(self) -> None:
        """A new sessions screen each time (bootlab's is made anew too)."""
        self.push_screen(SessionsList())

    def action_close_search(self) -> None:
        self.search.display = False
        self.lines.focus()

    def on_key(self, event: events.Key) -> None:
        if not self.escape:
            return
        self.escape = False
        event.stop()
        if event.character == "t":
            self.mode = (self.mode + 1) % len(TITLES)
            self.lines.border_title = f"console · {TITLES[self.mode]}"
        elif event.character == "/":
            self.search.display = True
            self.search.focus()
        elif event.character == "?":
            self.push_screen(KeysBox())
        elif event.character == "p":
            self.action_command_palette()
        elif event.character == "q":
            self.exit()


if __name__ == "__main__":
    ReferenceConsole(sys.argv[1]).run()
