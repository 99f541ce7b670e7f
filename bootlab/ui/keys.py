"""Keys typed into the live console: the bytes they send, and the Ctrl-T escape to the app.

As in tio and miniterm, every key goes to the board while the console has focus, except the
escape prefix: Ctrl-T, then a key from `ESCAPE_ACTIONS`, runs an app command (Ctrl-T Ctrl-T
sends a Ctrl-T).
"""

from __future__ import annotations

ESCAPE_KEY = "ctrl+t"
ESCAPE_BYTE = b"\x14"

_SPECIAL: dict[str, bytes] = {
    "enter": b"\r",
    "tab": b"\t",
    "backspace": b"\x7f",
    "escape": b"\x1b",
    "delete": b"\x1b[3~",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
    "right": b"\x1b[C",
    "left": b"\x1b[D",
    "home": b"\x1b[H",
    "end": b"\x1b[F",
    "pageup": b"\x1b[5~",
    "pagedown": b"\x1b[6~",
    "insert": b"\x1b[2~",
    "ctrl+space": b"\x00",
    "ctrl+at": b"\x00",
    "ctrl+left_square_bracket": b"\x1b",
    "ctrl+backslash": b"\x1c",
    "ctrl+right_square_bracket": b"\x1d",
    "ctrl+circumflex_accent": b"\x1e",
    "ctrl+underscore": b"\x1f",
}

ESCAPE_ACTIONS: dict[str, tuple[str, str]] = {
    "q": ("app.quit", "quit"),
    "t": ("cycle_time", "cycle the time column"),
    "slash": ("search", "search"),
    "n": ("next_match", "next match"),
    "N": ("previous_match", "previous match"),
    "e": ("follow", "follow new lines (End)"),
    "tab": ("app.focus_next", "focus the next pane (phases, settings)"),
    "p": ("palette", "command palette"),
    "question_mark": ("help", "keys (this help)"),
}
"""Key after Ctrl-T -> (screen action, what it does)."""
ESCAPE_NAMES = {"slash": "/", "tab": "Tab", "question_mark": "?"}
"""How the escape keys that are not letters are written in the help."""


def key_bytes(key: str, character: str | None) -> bytes | None:
    """The bytes a key sends to the board, or None for keys that send nothing.

    Args:
        key: Textual's key name (`enter`, `ctrl+c`, `a`, `shift+a` ...).
        character: the character the key produced, if any.
    """
    if key in _SPECIAL:
        return _SPECIAL[key]
    if key.startswith("ctrl+") and len(key) == 6 and key[5].isalpha():
        return bytes([ord(key[5].lower()) - ord("a") + 1])
    if character is not None and character.isprintable() and character:
        return character.encode("utf-8")
    return None


def escape_key_name(key: str, character: str | None) -> str:
    """The name an escape action is looked up by: the character for letters (so `N`
    differs from `n`), else Textual's key name."""
    if character is not None and len(character) == 1 and character.isalpha():
        return character
    return key
