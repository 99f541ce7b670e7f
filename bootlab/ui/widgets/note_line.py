"""A note on the boot shown, under the panes: what its collected dmesg added, or why nothing.

One line, cut with an ellipsis, so the console keeps its rows; in full (wrapped) while the
phase pane has the focus, as the settings pane's line under its list is. Hidden when there is
no note.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class NoteLine(Static):
    """One line of note, in full while `full`."""

    DEFAULT_CSS = """
    NoteLine {
        display: none;
        height: 1;
        padding: 0 1;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &.-shown { display: block; }
        &.-full { height: auto; max-height: 8; text-wrap: wrap; }
    }
    """

    note: str | None = None
    """The note shown (None: none)."""

    def show(self, note: str | None, full: bool) -> None:
        """Show `note` (None: hide the line), in full or on one line."""
        if note != self.note:
            self.note = note
            self.update(Text(note or ""))
        self.set_class(note is not None, "-shown")
        self.set_class(full, "-full")
