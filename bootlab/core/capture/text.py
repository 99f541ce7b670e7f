"""Make device bytes safe to show: no device byte may drive the host terminal.

Device output is untrusted. Escape sequences (CSI, OSC such as clipboard writes and title
changes, DCS, SOS, PM, APC, 8-bit C1 controls) are removed; carriage returns and backspaces are
applied the way a terminal would draw them (progress lines, the autoboot countdown); any other
control character is shown as its Unicode control picture (NUL as ␀). Only SGR colour
sequences may be kept, and only when asked for (`keep_sgr=True`).
"""

from __future__ import annotations

import re

# One alternation: CSI, OSC/DCS/SOS/PM/APC strings (terminated by BEL or ST, or cut off at the
# end of the line), two-byte ESC sequences, C1 controls (as decoded code points U+0080-U+009F).
_ESCAPES = r"""
    \x1b\[[0-?]*[ -/]*[@-~]?              # CSI ... final byte (final may be missing: cut line)
  | \x9b[0-?]*[ -/]*[@-~]?                # 8-bit CSI
  | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])  # OSC, DCS, SOS, PM, APC (7- and 8-bit introducers)
    [^\x07\x1b\x9c%s]*(?:\x07|\x1b\\|\x9c)?  # ... up to BEL or ST
  | \x1b[ -/]*[0-~]?                      # other ESC sequences (charset, keypad, RIS ...)
  | [\x80-\x9f]                           # remaining C1 controls
    """
"""The escape sequences; `%s` holds what else ends a string sequence (a line's end, for
`clean_lines`)."""
_ESCAPE = re.compile(_ESCAPES % "", re.VERBOSE)
_SGR_SPLIT = re.compile(r"(\x1b\[[0-9;:]*m)")
_CONTROLS = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09,)}
_CONTROLS[0x7F] = "\u2421"
_CONTROL_TABLE = str.maketrans(_CONTROLS)


def decode(raw: bytes) -> str:
    """Decode device bytes as UTF-8, invalid bytes shown as U+FFFD."""
    return raw.decode("utf-8", errors="replace")


def _apply_cr(text: str) -> str:
    """Draw carriage returns as a terminal would: a later segment overwrites the line's start."""
    if "\r" in text:
        text = text.rstrip("\r")
        if "\r" in text:
            screen = ""
            for segment in text.split("\r"):
                screen = segment + screen[len(segment):]
            text = screen
    return text


def _apply_cr_bs(text: str) -> str:
    """Draw carriage returns and backspaces as a terminal would, on one line."""
    text = _apply_cr(text)
    if "\b" in text:
        out: list[str] = []
        for ch in text:
            if ch == "\b":
                if out:
                    out.pop()
            else:
                out.append(ch)
        text = "".join(out)
    return text


def clean(raw: bytes | str, keep_sgr: bool = False) -> str:
    """Return a line's text as it may be shown to a person.

    Args:
        raw: the line's bytes (or already decoded text), without its newline.
        keep_sgr: keep SGR colour sequences (for renderers that parse them safely).

    Returns:
        Text with no escape sequence (except SGR when asked), no C0/C1 control.
    """
    text = decode(raw) if isinstance(raw, bytes) else raw
    # Colours are kept only where no carriage return or backspace redraws the line: those act
    # on what is shown, across colour runs, so such a line is drawn plainly.
    redrawn = "\b" in text or "\r" in text.rstrip("\r")
    if keep_sgr and "\x1b[" in text and not redrawn:
        # SGR runs are kept verbatim; every other run is cleaned on its own, so no device text
        # can be mistaken for a kept sequence.
        parts = _SGR_SPLIT.split(text)
        return "".join(part if i % 2 else _clean_run(part) for i, part in enumerate(parts))
    return _clean_run(text)


def _clean_run(text: str) -> str:
    text = _ESCAPE.sub("", text)
    text = _apply_cr_bs(text)
    text = text.translate(_CONTROL_TABLE)
    return text


_ESCAPE_IN_LINES = re.compile(_ESCAPES % r"\n", re.VERBOSE)
"""`_ESCAPE` that never runs past a line's end (a string sequence cut off at its line's end)."""
_CONTROL_TABLE_IN_LINES = str.maketrans({c: p for c, p in _CONTROLS.items() if c != 0x0A})


def clean_lines(raw: bytes) -> str:
    """`clean` of many lines at once: the lines of `raw` (joined by newlines) each cleaned as
    `clean` would, joined by newlines again. For lines with no carriage return or backspace
    (those redraw the line: clean them one by one)."""
    if _PLAIN_LINES.fullmatch(raw) is not None:  # nearly every log: nothing to clean
        return raw.decode("ascii")
    return _ESCAPE_IN_LINES.sub("", decode(raw)).translate(_CONTROL_TABLE_IN_LINES)


_PLAIN_LINES = re.compile(rb"[\t\n\x20-\x7e]*")
"""Lines of printable ASCII and tabs: `clean_lines` leaves them as they are."""


_KEEP_BACKSPACE = str.maketrans({c: p for c, p in _CONTROLS.items() if c != 0x08})


def match_text(raw: bytes) -> str:
    """A line as markers read it: cleaned, but with its backspaces kept, not drawn.

    Drawing a countdown (`Hit any key to stop autoboot:  3 \b\b\b 2 ...`) leaves only its
    last number; the first one is the bootdelay, and a line of nothing but backspaced numbers is
    a boot menu's countdown. Never shown: `clean` gives the text to show.
    """
    return _apply_cr(_ESCAPE.sub("", decode(raw))).translate(_KEEP_BACKSPACE)


NOISE = "".join(chr(0x2400 + c) for c in range(0x20) if c != 0x08) + "\u2421\ufffd"
"""What a line may start with before the board's text: a UART's power-on garbage (NUL, 0xff,
invalid UTF-8) and stray controls, as `clean` and `match_text` render them."""


def is_plain(raw: bytes) -> bool:
    """True when the bytes are printable ASCII (plus tab and a trailing CR): no cleaning needed."""
    return raw.isascii() and _NEEDS_CLEANING.search(raw) is None


_NEEDS_CLEANING = re.compile(rb"[\x00-\x08\x0a-\x0c\x0e-\x1f\x7f]|\r(?!$)")
