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
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 120
"""Terminals narrower than this get the compact footer (less space between keys)."""


class KeyFooter(Footer):
    """Textual's footer, forgetting the keys it composed before; compact on narrow
    terminals, and showing only the keys that fit whole (in the bindings' order: the first,
    `? Keys`, lists the others), never one cut at the edge."""

    # Textual's footer draws its keys in $footer-key-foreground on $footer-background, which
    # some themes choose too close together to read, or as a mid tone no text reads on: here
    # the keys are $text on the app's $panel, the descriptions $text-muted.
    DEFAULT_CSS = """
    KeyFooter {
        background: $panel;
        color: $text;
        & FooterKey .footer-key--key { color: $text; background: transparent; }
        & FooterKey .footer-key--description { color: $text-muted; background: transparent; }
        & FooterLabel { color: $text-muted; background: transparent; }
    }
    """

    _width = 0

    def on_resize(self) -> None:
        """Compact below COMPACT_BELOW columns; the keys that fit chosen again."""
        width = self.app.size.width
        self.compact = width < COMPACT_BELOW
        if width != self._width:
            self._width = width
            self.refresh(recompose=True)

    def _cells(self, key: FooterKey) -> int:
        """Columns a key takes, as Footer's style sheet lays it out."""
        label = len(key.key_display) + (len(key.description) + 1 if key.description else 0)
        if key.has_class("-command-palette"):
            return 1 + label + (0 if self.compact else 3)  # its border, its padding
        return label + 1 if self.compact else label + (3 if key.description else 2)

    def compose(self) -> ComposeResult:
        """The keys, after dropping the watchers left by the keys removed (the pruning
        Textual does when the watched value changes) and what the styles cache held of
        widgets removed."""
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers
                           if not node._closing]
        StylesCache.get_inner_outer.cache_clear()
        items = list(super().compose())
        palette = [item for item in items
                   if isinstance(item, FooterKey) and item.has_class("-command-palette")]
        room = self.app.size.width - sum(self._cells(key) for key in palette)
        for item in items:
            if item in palette:
                continue
            if isinstance(item, FooterKey):
                room -= self._cells(item)
                if room < 0:
                    break
            yield item
        yield from palette
