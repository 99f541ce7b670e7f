"""JSON for the commands' `--json`: readable, and encoded at C speed however big.

`json.dump(data, out, indent=1)` runs Python's pure-Python encoder (the C one does not
indent) and writes each of its many small pieces to the stream: on a reboot-loop capture of
2,771 boots that cost more than the analysis itself. Here objects and lists are laid out one
member per line as `indent=1` does, except that an object inside a list (a milestone, a
phase, a boot, a column) is one line of its own, encoded by the C encoder in one call; the
text is written once.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

_ENCODE = json.JSONEncoder().encode
"""The C encoder (compact, ASCII, `", "` and `": "` as `json.dumps` separates)."""


def dumps(data: Any) -> str:
    """`data` as JSON text (see the module docstring), ending in a newline."""
    out: list[str] = []
    _layout(data, 0, out)
    out.append("\n")
    return "".join(out)


def write(data: Any, stream: TextIO) -> None:
    """Write `data` as JSON text to `stream` in one write."""
    stream.write(dumps(data))


def _layout(value: Any, depth: int, out: list[str]) -> None:
    if isinstance(value, dict) and value:
        inner = "\n" + " " * (depth + 1)
        out.append("{")
        for index, (key, member) in enumerate(value.items()):
            out.append(("," if index else "") + inner + _key(key) + ": ")
            _layout(member, depth + 1, out)
        out.append("\n" + " " * depth + "}")
    elif isinstance(value, list | tuple) and value:
        inner = ",\n" + " " * (depth + 1)
        if all(isinstance(item, dict) for item in value):
            out.append("[" + inner[1:] + inner.join(map(_ENCODE, value)))
        else:
            out.append("[")
            for index, item in enumerate(value):
                out.append(inner if index else inner[1:])
                _layout(item, depth + 1, out)
        out.append("\n" + " " * depth + "]")
    else:
        out.append(_ENCODE(value))


def _key(key: object) -> str:
    """An object key as `json.dumps` writes it (keys that are not strings become strings)."""
    if isinstance(key, str):
        return _ENCODE(key)
    return _ENCODE(_ENCODE(key) if isinstance(key, bool) or key is None else str(key))
