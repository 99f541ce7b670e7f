"""The footer of keys, without the leaks of Textual's own (Textual issues #6666 and #6665).

Textual's `Footer` composes its keys anew whenever the screen's bindings change, which is
whenever the focus moves (opening the search bar, closing it, every dialog). Each key binds
`compact` to the footer (`data_bind`), leaving an entry on the footer's list of watchers, and
Textual prunes that list only when `compact` changes, which it never does. So every
recomposition kept all the previous keys alive with all they hold: ~80 KB per key pressed, and
under a flood the app's memory grew with each key.

Even without that, each removed key stayed alive in a cache of Textual's styles renderer
(`StylesCache.get_inner_outer`, an `lru_cache` on a method, so keyed by the renderer and kept
with all the lines it rendered, up to 1,024 of them): ~20 KB per key until 1,024 were held.
The footer empties that cache when it composes, which lets go of every removed widget held
there (the keys, closed dialogs, notices); what it held is two colours per widget, made again
at the next frame.
"""

from __future__ import annotations

from textual._styles_cache import StylesCache
from textual.app import ComposeResult
from textual.widgets import Footer


class KeyFooter(Footer):
    """Textual's footer, forgetting the keys it composed before."""

    def compose(self) -> ComposeResult:
        """The keys, after dropping the watchers left by the keys removed (the pruning
        Textual does when the watched value changes) and what the styles cache held of
        widgets removed."""
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers
                           if not node._closing]
        StylesCache.get_inner_outer.cache_clear()
        yield from super().compose()
