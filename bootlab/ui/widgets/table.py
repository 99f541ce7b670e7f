"""Textual's DataTable without the renders it can never use again.

Textual's DataTable caches what it renders (cells, rows, lines) under keys holding a count it
raises on every change (a cell updated, a row added, the table resized) and the table's focus
and hover state, and leaves the entries of older keys to fall out of bounded caches of 10,000
cells, 1,000 rows and 1,000 lines: several MB per table. The phase pane changes with every tick
of a running boot and is resized whenever the search bar opens or closes, so the app's memory
climbed with each key until those caches were full. Entries of an older key are never read
again, so they are dropped as soon as the key changes.
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import PseudoClasses
from textual.widgets import DataTable


class LeanTable(DataTable[Text]):
    """Textual's DataTable, forgetting its renders once they are stale."""

    _rendered: tuple[int, PseudoClasses] | None = None
    """The change count and state the cached renders were made for."""

    def render_lines(self, crop: Region) -> list[Strip]:
        """Render, after dropping renders made before the last change."""
        rendered = (self._update_count, self.get_pseudo_class_state())
        if rendered != self._rendered:
            self._rendered = rendered
            for cache in (self._cell_render_cache, self._row_render_cache,
                          self._row_renderable_cache, self._line_cache):
                cache.clear()
        return super().render_lines(crop)

    def watch_show_vertical_scrollbar(self, show: bool) -> None:
        """Put a bar that appears where the view is: Textual moves the thumb only as the view
        scrolls, so a table scrolled to its newest row before it grew a bar (the phase pane
        following a boot) drew the thumb at the top."""
        if show:
            self.vertical_scrollbar.position = self.scroll_y
