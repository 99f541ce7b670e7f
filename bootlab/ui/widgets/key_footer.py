"""The footer of keys, without the leak of Textual's own (Textual issue #6666).

Textual's `Footer` composes its keys anew whenever the screen's bindings change, which is
whenever the focus moves (opening the search bar, closing it, every dialog). Each key binds
`compact` to the footer (`data_bind`), leaving an entry on the footer's list of watchers, and
Textual prunes that list only when `compact` changes, which it never does. So every
recomposition kept the previous ~25 keys alive with all they hold: ~80 KB per key pressed, and
under a flood the app's memory grew with each key.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer


class KeyFooter(Footer):
    """Textual's footer, forgetting the keys it composed before."""

    def compose(self) -> ComposeResult:
        """The keys, after dropping the watchers left by the keys removed (the pruning
        Textual does when the watched value changes)."""
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers
                           if not node._closing]
        yield from super().compose()
