"""The main screen's console keys: the time column, wrap, hex, local echo, BREAK, follow and
search (the bar, next and previous match)."""

from __future__ import annotations

from textual import on
from textual.actions import SkipAction
from textual.widgets import Input

from bootlab.core.capture.textlog import TIME_MODES
from bootlab.session.live import BoardBusy, LiveLink
from bootlab.transports.errors import PortError
from bootlab.ui.main.board_actions import BoardActions
from bootlab.ui.widgets.console import ConsoleView


class ConsoleKeys(BoardActions):
    """What the console's keys do (the screen's state: `MainScreen`)."""

    _console_view: ConsoleView
    _query = ""
    """The last search."""

    @property
    def console(self) -> ConsoleView:
        """The console pane (its state is still there as the screen closes)."""
        return self._console_view

    def action_cycle_time(self) -> None:
        """Next time column: elapsed, delta, clock, printk."""
        console = self.console
        console.time_mode = TIME_MODES[(TIME_MODES.index(console.time_mode) + 1)
                                       % len(TIME_MODES)]

    def action_send_break(self) -> None:
        """Send a BREAK on the live port (Ctrl-T b; the palette)."""
        if not isinstance(self.source, LiveLink):
            self.notify("a replay has no port to send a BREAK on", title="port",
                        severity="warning", markup=False)
            return
        try:
            self.source.send_break()
        except (BoardBusy, PortError) as error:
            self.notify(str(error), title="port", severity="warning", markup=False)
            return
        self.notify("BREAK sent", title="port", markup=False)

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or cut them at the pane's edge."""
        self.console.wrap = not self.console.wrap

    def action_toggle_hex(self) -> None:
        """Show the lines' bytes in hex, or their text."""
        self.console.hex_view = not self.console.hex_view

    def action_toggle_echo(self) -> None:
        """Local echo on or off (a live port: what is typed shows in the console)."""
        if not isinstance(self.source, LiveLink):
            self.notify("a replay has no keys to echo", title="console", severity="warning",
                        markup=False)
            return
        console = self.console
        console.local_echo = not console.local_echo
        self.notify(f"local echo {'on: typed keys show dimmed' if console.local_echo else 'off'}",
                    title="console", markup=False)

    def action_follow(self) -> None:
        """Follow new lines."""
        self.console.following = True

    def action_search(self) -> None:
        """Open the search bar."""
        search = self.query_one("#search", Input)
        search.add_class("-open")
        search.value = self._query
        self.set_focus(search)             # now, not after the queue: keys typed ahead go to it

    def action_close_search(self) -> None:
        """Close the search bar, back to the console."""
        search = self.query_one("#search", Input)
        if search.has_class("-open"):
            search.remove_class("-open")
            self.console.focus()
        else:
            raise SkipAction()  # Esc then goes back, on a screen pushed over another

    @on(Input.Submitted, "#search")
    def _search(self, message: Input.Submitted) -> None:
        self._query = message.value
        self.action_close_search()
        self._find(forward=True)

    def action_next_match(self) -> None:
        """Next line matching the search."""
        self._find(forward=True)

    def action_previous_match(self) -> None:
        """Previous line matching the search."""
        self._find(forward=False)

    def _find(self, forward: bool) -> None:
        if not self._query:
            self.action_search()
            return
        found = self.console.find(self._query, forward)
        if found is None:
            self.notify(f"not found: {self._query}", severity="warning", markup=False)
            return
        wrapped = f" · wrapped to the {'top' if forward else 'end'}" if found.wrapped else ""
        self.console.search_note = f"{self._query}: {found.number}/{found.total}{wrapped}"
