"""The help screen: every key, by where it works, as remapped by config.toml.

The screen that opens it passes its own sections first; the keys that work anywhere, the other
screens' keys and the id of every binding (what config.toml's `[keys]` and `[escape]` tables
name) follow, all read from the bindings themselves, so a new or remapped key shows here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.geometry import Size
from textual.screen import ModalScreen, Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip

from bootlab.ui.keys import ESCAPE_ACTIONS, ESCAPES, escape_display

Section = tuple[str, Sequence[tuple[str, str]]]
"""A heading and its (keys, what they do) rows."""
OWN_PACKAGE = "bootlab."


def key_sections(screen_keys: Sequence[tuple[str, str]],
                 setting_keys: Sequence[tuple[str, str]]) -> list[Section]:
    """Every key of the main screen, by where it works.

    Args:
        screen_keys: (key, what it does) of the screen's bindings.
        setting_keys: (key, title) of the settings.
    """
    return [
        ("Main screen (live: outside the console, or Ctrl-T first)", [
            *screen_keys, ("End", "follow new lines again"),
            ("Left / Right", "scroll long lines sideways (w wraps them instead)"),
            ("Tab / Shift-Tab", "focus the next / previous pane")]),
        ("Console, live: keys go to the board; Ctrl-T then", [
            ("Ctrl-T", "send Ctrl-T itself"),
            *((escape_display(key), text) for key, (_action, text) in ESCAPE_ACTIONS.items())]),
        ("Phases", [("Enter", "show the milestone's line in the console")]),
        ("Settings (when the console does not have the focus)", [
            (key, f"{title}: mark pending / unmark") for key, title in setting_keys]),
        ("Settings pane", [
            ("Up / Down", "highlight a setting: the line under the list says what shows its "
                          "state"),
            ("Enter", "mark the highlighted setting pending / unmark")]),
    ]


def bound_classes() -> Iterator[type[DOMNode]]:
    """bootlab's screens, widgets and app that declare bindings of their own."""
    pending: list[type[DOMNode]] = [DOMNode]
    seen: set[type[DOMNode]] = set()
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                pending.append(sub)
                if sub.__module__.startswith(OWN_PACKAGE) and sub.__dict__.get("BINDINGS"):
                    yield sub


def own_bindings(cls: type[DOMNode]) -> list[Binding]:
    """The bindings a class declares itself (not those it inherits), one per key."""
    return list(Binding.make_bindings(cls.__dict__.get("BINDINGS", [])))


def binding_rows(app: App[None], bindings: Sequence[Binding]) -> list[tuple[str, str]]:
    """(keys as the app shows them, what they do), one row per binding id (or action)."""
    rows: dict[str, tuple[list[str], str]] = {}
    for binding in bindings:
        keys, _ = rows.setdefault(binding.id or binding.action,
                                  ([], binding.tooltip or binding.description))
        display = app.get_key_display(binding)
        if display not in keys:
            keys.append(display)
    return [(" / ".join(keys), text) for keys, text in rows.values()]


def other_sections(app: App[None], skip: Sequence[str]) -> list[Section]:
    """The app's own keys, then every screen's that names a `HELP_TITLE` (but those whose
    title is in `skip`, which the opener already gave), then the binding ids."""
    sections: list[Section] = [
        ("Anywhere", [*binding_rows(app, own_bindings(type(app))),
                      ("Tab / Shift-Tab", "focus the next / previous pane")])]
    for cls in sorted(bound_classes(), key=lambda c: c.__name__):
        title = getattr(cls, "HELP_TITLE", None)
        if isinstance(title, str) and title and title not in skip:
            sections.append((title, binding_rows(app, own_bindings(cls))))
    sections.append(("Ids for config.toml: [keys] id = \"key\"", id_rows(app)))
    sections.append(("Ids for config.toml: [escape] id = \"key after Ctrl-T\"",
                     escape_id_rows()))
    return sections


def escape_id_rows() -> list[tuple[str, str]]:
    """(escape id, its key now and what it does) for every Ctrl-T escape."""
    keys = {action: key for key, (action, _text) in ESCAPE_ACTIONS.items()}
    return [(escape.id, f"{escape_display(keys[escape.action]) if escape.action in keys else '-'}"
                        f"  {escape.text}") for escape in ESCAPES]


def id_rows(app: App[None]) -> list[tuple[str, str]]:
    """(binding id, its keys now) for every binding of bootlab's, each id once."""
    keys: dict[str, list[str]] = {}
    for cls in bound_classes():
        for binding in own_bindings(cls):
            if binding.id is not None:
                shown = keys.setdefault(binding.id, [])
                display = app.get_key_display(binding)
                if display not in shown:
                    shown.append(display)
    return [(ident, " / ".join(keys[ident])) for ident in sorted(keys)]


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


def table_key(sections: Sequence[Section]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """The sections as a hashable value: the same key table has the same key."""
    return tuple((heading, tuple(rows)) for heading, rows in sections)


class KeyTable(ScrollView):
    """The key table, drawn a row at a time from lines rendered once.

    As a `Static` in a scrolling box the whole table (some 150 rows) was rendered through Rich
    on every opening, twice (to measure it, then to draw it): 50-60 ms of the help's opening,
    and more under a flood. Here it is rendered once per table and width, the lines are kept
    for the next opening, and a frame draws only the rows in view.
    """

    rendered: ClassVar[tuple[object, list[Strip]] | None] = None
    """The last table's key (with the width) and its lines, kept across openings."""

    def __init__(self, table: Table, key: object, widget_id: str | None = None) -> None:
        """Args:
            table: what to show.
            key: a hashable value that is the same for the same table (`table_key`).
            widget_id: the widget's id.
        """
        super().__init__(id=widget_id)
        self.table = table
        self.key = key

    def on_resize(self) -> None:
        """How far the view scrolls: the table's lines at this width."""
        lines = self._lines(self.scrollable_content_region.width)
        self.virtual_size = Size(max((line.cell_length for line in lines), default=0),
                                 len(lines))

    def _lines(self, width: int) -> list[Strip]:
        """The table's lines at `width`, rendered unless kept from an earlier opening (asked
        for by the first frame, which may come before the resize event)."""
        kept = KeyTable.rendered
        if kept is None or kept[0] != (self.key, width):
            console = self.app.console
            kept = ((self.key, width), [Strip(line) for line in Segment.split_and_crop_lines(
                console.render(self.table, console.options.update_width(width)), width,
                pad=False)])
            KeyTable.rendered = kept
        return kept[1]

    def render_line(self, y: int) -> Strip:
        """Row `y` of the view."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        lines = self._lines(width)
        index = scroll_y + y
        style = self.rich_style
        if index >= len(lines):
            return Strip.blank(width, style)
        return lines[index].crop_extend(scroll_x, scroll_x + width, None).apply_style(style)


class HelpScreen(ModalScreen[None]):
    """Keys, in a scrollable box over the screen that opened it."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > KeyTable {
            width: 84;
            max-width: 100%;
            height: 90%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
            overflow-x: hidden;
            overflow-y: scroll;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="close-help",
                tooltip="close the help")]

    def __init__(self, sections: Sequence[Section]) -> None:
        """Args:
            sections: the opening screen's own keys, shown first.
        """
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        """The key table."""
        sections = [*self.sections,
                    *other_sections(self.app, [heading for heading, _ in self.sections])]
        box = KeyTable(key_table(sections), table_key(sections), "help-keys")
        box.border_title = "bootlab keys"
        box.border_subtitle = "Esc closes"
        yield box


class KeyedScreen(Screen[None]):
    """A screen whose `?` shows its own keys under its `HELP_TITLE`."""

    HELP_TITLE: ClassVar[str] = ""

    def action_help(self) -> None:
        """Show every key."""
        self.app.push_screen(HelpScreen(self.key_sections()))

    def key_sections(self) -> list[Section]:
        """This screen's keys (for the help screen)."""
        return [(self.HELP_TITLE, binding_rows(self.app, own_bindings(type(self))))]
