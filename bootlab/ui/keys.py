"""Keys typed into the live console: the bytes they send, and the Ctrl-T escape to the app.

As in tio and miniterm, every key goes to the board while the console has focus, except the
escape prefix: Ctrl-T, then a key from `ESCAPE_ACTIONS`, runs an app command (Ctrl-T Ctrl-T
sends a Ctrl-T).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual.keys import _character_to_key, format_key

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

@dataclass(frozen=True)
class Escape:
    """An app command reached from the live console with Ctrl-T and then a key."""

    id: str
    """What config.toml's [escape] table calls it (the binding's id where there is one)."""
    key: str
    """The key after Ctrl-T, unless config.toml says otherwise."""
    action: str
    """The main screen's action (`app.` ones are the app's)."""
    text: str


ESCAPES = (
    Escape("quit", "q", "app.quit", "quit"),
    Escape("cycle-time", "t", "cycle_time", "cycle the time column"),
    Escape("search", "slash", "search", "search"),
    Escape("next-match", "n", "next_match", "next match"),
    Escape("previous-match", "N", "previous_match", "previous match"),
    Escape("follow", "e", "follow", "follow new lines (End)"),
    Escape("toggle-wrap", "w", "toggle_wrap", "wrap long lines, or cut them (Left/Right)"),
    Escape("toggle-hex", "h", "toggle_hex", "hex view of the lines' bytes, or their text"),
    Escape("local-echo", "l", "toggle_echo", "local echo: show what you type"),
    Escape("send-break", "b", "send_break", "send a BREAK (SysRq, bootloaders that want one)"),
    Escape("focus-next", "tab", "app.focus_next", "focus the next pane (phases, settings)"),
    Escape("command-palette", "p", "palette", "command palette"),
    Escape("sessions", "s", "app.sessions", "sessions screen"),
    Escape("compare", "c", "app.compare", "compare screen"),
    Escape("mark-milestone", "u", "mark_milestone", "mark the search match (or newest "
           "line) as a milestone"),
    Escape("apply-pending", "P", "apply_pending", "apply the pending settings and boot"),
    Escape("reboot-board", "R", "reboot_board", "reboot the board now"),
    Escape("ab-pending", "T", "ab_pending", "A/B run of the pending settings"),
    Escape("advice", "A", "advice", "recommendations (Enter measures one)"),
    Escape("cancel-job", "C", "cancel_job", "cancel the running board job"),
    Escape("set-goal", "G", "set_goal", "the boot's goal: a milestone or a pattern"),
    Escape("help", "question_mark", "help", "keys (this help)"),
)
ESCAPE_ACTIONS: dict[str, tuple[str, str]] = {}
"""The escape keys in force: key after Ctrl-T -> (screen action, what it does). The app sets
them from `ESCAPES` and config.toml when it starts (`apply_escape_keys`)."""


def escape_key(written: str) -> str:
    """The name the console looks an escape key up by (`escape_key_name`): a letter as
    itself, anything else as Textual's key name (`/` -> `slash`)."""
    if len(written) == 1 and not written.isalpha():
        return _character_to_key(written)
    return written


def escape_display(key: str) -> str:
    """How an escape key is written in the help (`slash` as `/`)."""
    return "Tab" if key == "tab" else format_key(key)


def apply_escape_keys(chosen: Mapping[str, str]) -> list[tuple[str, str]]:
    """Put the escape keys in force: the defaults, with `chosen` (escape id -> key) over them.

    Returns:
        (id, reason) for each choice that was not applied: an unknown id, or a key that
        another escape keeps.
    """
    by_id = {escape.id: escape for escape in ESCAPES}
    problems = [(ident, f"no Ctrl-T escape is called {ident!r} (they are: "
                        f"{', '.join(by_id)})") for ident in chosen if ident not in by_id]
    keys = {escape.id: escape.key for escape in ESCAPES}
    keys.update({ident: escape_key(key) for ident, key in chosen.items() if ident in by_id})
    taken: dict[str, Escape] = {}
    for escape in sorted(ESCAPES, key=lambda e: e.id not in chosen):  # chosen keys first
        key = keys[escape.id]
        holder = taken.get(key)
        if holder is None:
            taken[key] = escape
        elif escape.id in chosen:
            problems.append((escape.id, f"Ctrl-T {escape_display(key)} is already "
                                        f"{holder.text!r}"))
        else:
            problems.append((holder.id, f"Ctrl-T {escape_display(key)} was {escape.text!r}, "
                                        f"which now has no key: give {escape.id!r} another"))
    ESCAPE_ACTIONS.clear()
    ESCAPE_ACTIONS.update({key: (e.action, e.text) for e in ESCAPES
                           for key, holder in taken.items() if holder is e})
    return problems


apply_escape_keys({})


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
