"""The help screen: every key, by where it works."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from bootlab.ui.keys import ESCAPE_ACTIONS, ESCAPE_NAMES

Section = tuple[str, Sequence[tuple[str, str]]]
"""A heading and its (keys, what they do) rows."""


def key_sections(screen_keys: Sequence[tuple[str, str]],
                 setting_keys: Sequence[tuple[str, str]]) -> list[Section]:
    """Every key of the main screen, by where it works.

    Args:
        screen_keys: (key, what it does) of the screen's bindings.
        setting_keys: (key, title) of the settings.
    """
    return [
        ("Anywhere (live: outside the console, or Ctrl-T first)", [
            *screen_keys, ("End", "follow new lines again"),
            ("Tab / Shift-Tab", "focus the next / previous pane"),
            ("Ctrl-P", "command palette (themes, every action)"), ("Ctrl-Q", "quit")]),
        ("Console, live: keys go to the board; Ctrl-T then", [
            ("Ctrl-T", "send Ctrl-T itself"),
            *((ESCAPE_NAMES.get(key, key), text)
              for key, (_action, text) in ESCAPE_ACTIONS.items())]),
        ("Phases", [("Enter", "show the milestone's line in the console")]),
        ("Settings (when the console does not have the focus)", [
            (key, f"{title}: mark pending / unmark") for key, title in setting_keys]),
    ]


def key_table(sections: Sequence[Section]) -> Table:
    """The sections as one two-column table."""
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", style="bold", no_wrap=True)
    table.add_column()
    for index, (heading, rows) in enumerate(sections):
        if index:
            table.add_row("", "")
        table.add_row("", Text(heading, style="bold underline"))
        for keys, description in rows:
            table.add_row(keys, description)
    return table


class HelpScreen(ModalScreen[None]):
    """Keys, in a scrollable box over the main screen."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            width: 84;
            max-width: 100%;
            height: 90%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="close-help")]

    def __init__(self, sections: Sequence[Section]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        """The key table."""
        with VerticalScroll() as box:
            box.border_title = "bootlab keys"
            box.border_subtitle = "Esc closes"
            yield Static(key_table(self.sections), id="help-keys")
