"""The console pane: the log view, plus typing to the board when the port is live.

With a live port and the focus here, every key is sent to the board (printable keys, Enter as
CR, Backspace as DEL, Ctrl-C, arrows ...). Ctrl-T is the escape: the next key runs an app
command instead (see `bootlab.ui.keys`). The pane's border shows the time column, whether
keys go to the board, and how many lines arrived while scrolled back.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.reactive import var

from bootlab.ui.keys import ESCAPE_ACTIONS, ESCAPE_BYTE, ESCAPE_KEY, escape_key_name, key_bytes
from bootlab.ui.widgets.log_view import TIME_TITLES, LogView


def typed_text(data: bytes, secret: bool) -> str:
    """Typed bytes as local echo shows them: Enter as ⏎, Backspace and DEL as a backspace
    (`type_echo` takes a character back), a special key's escape sequence and other controls
    as nothing; a secret's characters as dots."""
    if data.startswith(b"\x1b"):  # an arrow, Home, a function key: nothing to show
        return ""
    out = []
    for char in data.decode("utf-8", errors="replace"):
        if char in "\r\n":
            out.append("⏎")
        elif char in "\b\x7f":
            out.append("\b")
        elif char.isprintable():
            out.append("•" if secret else char)
    return "".join(out)


class ConsoleView(LogView):
    """The log view that types into the live port."""

    live: var[bool] = var(False)
    """Keys typed here go to the board."""
    escaping: var[bool] = var(False)
    """Ctrl-T was pressed: the next key is an app command."""
    search_note: var[str] = var("")
    """Where the search is: `quiet: 3/17`, and when it went round an end."""
    local_echo: var[bool] = var(False)
    """What is typed is shown after the board's text (for a board that does not echo)."""

    @dataclass
    class Typed(Message):
        """Bytes to send to the board."""

        data: bytes

    @dataclass
    class Escaped(Message):
        """Ctrl-T and then `key`: run `action` (None: the key means nothing after Ctrl-T)."""

        key: str
        action: str | None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """End goes to the board in a live console (Ctrl-T e follows there)."""
        return not (action == "follow" and self.live)

    def on_key(self, event: events.Key) -> None:
        """Send keys to the board, or take the one after Ctrl-T as an app command."""
        if not self.live:
            return
        if self.escaping:
            self.escaping = False
            event.stop()
            event.prevent_default()
            if event.key == ESCAPE_KEY:
                self.post_message(self.Typed(ESCAPE_BYTE))
                return
            name = escape_key_name(event.key, event.character)
            action = ESCAPE_ACTIONS.get(name)
            self.post_message(self.Escaped(name, action[0] if action else None))
            return
        if event.key == ESCAPE_KEY:
            self.escaping = True
            event.stop()
            event.prevent_default()
            return
        data = key_bytes(event.key, event.character)
        if data is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(data))

    def on_paste(self, event: events.Paste) -> None:
        """Pasted text goes to the board as typed, with newlines as Enter."""
        if self.live and event.text:
            event.stop()
            self.post_message(self.Typed(event.text.replace("\r\n", "\r")
                                         .replace("\n", "\r").encode("utf-8")))

    def on_mount(self) -> None:
        """Show the initial titles (LogView's own on_mount runs too)."""
        self._titles()

    def watch_time_mode(self) -> None:
        """Redraw, and name the time column in the border."""
        super().watch_time_mode()
        self._titles()

    def watch_pending(self) -> None:
        """Show how many lines are waiting below."""
        self._titles()

    def watch_live(self) -> None:
        """Say whether keys go to the board."""
        self._titles()

    def watch_escaping(self) -> None:
        """Say that the next key is a command."""
        self._titles()

    def watch_search_note(self) -> None:
        """Say where the search is."""
        self._titles()

    def watch_wrap(self) -> None:
        """Lay the lines out again, and say whether they wrap."""
        super().watch_wrap()
        self._titles()

    def watch_local_echo(self) -> None:
        """Say whether typed keys are shown."""
        self._titles()

    def echo(self, data: bytes, secret: bool) -> None:
        """Show bytes just sent, when local echo is on (a password as dots)."""
        if self.local_echo:
            self.type_echo(typed_text(data, secret))

    def _titles(self) -> None:
        self.border_title = f"console · {TIME_TITLES[self.time_mode]}" + \
            (" · hex" if self.hex_view else "") + (" · wrapped" if self.wrap else "") + \
            (" · echo" if self.local_echo else "")
        parts = [f"/{self.search_note}"] if self.search_note else []
        if self.pending:
            parts.append(f"+{self.pending} new lines · End follows")
        if self.escaping:
            parts.append("Ctrl-T: command key? (? lists them)")
        elif self.live:
            parts.append("keys go to the board · Ctrl-T ? help")
        self.border_subtitle = " · ".join(parts)
