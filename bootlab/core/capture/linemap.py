"""CR/LF mapping as picocom names it (`--imap`, `--omap`): received bytes as they are read
(a board that ends its lines with a lone CR, one that sends CR LF twice), typed bytes as they
are sent (a board that wants LF for Enter, BS for Backspace).

An input map is applied where the stream is framed into lines (the app's console and phases,
`record`'s lines and milestones) and stored in the session header (`imap`), so reading the
session applies it again (`mapped_chunks`); the session keeps the bytes as received. Input
maps change one byte into one byte (`INPUT_MAPS`), so a byte's place in the stream is the same
mapped or not (a boot found in the mapped stream starts at the same byte of the session).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAPS: dict[str, tuple[bytes, bytes]] = {
    "crlf": (b"\r", b"\n"), "crcrlf": (b"\r", b"\r\n"), "igncr": (b"\r", b""),
    "lfcr": (b"\n", b"\r"), "lfcrlf": (b"\n", b"\r\n"), "ignlf": (b"\n", b""),
    "bsdel": (b"\b", b"\x7f"), "delbs": (b"\x7f", b"\b"),
}
"""picocom's map names: the byte and what it becomes."""
INPUT_MAPS = tuple(name for name, (old, new) in MAPS.items() if len(new) == len(old))
"""The maps of received bytes: one byte for one."""


def parse_map(text: str, allowed: Sequence[str] = tuple(MAPS)) -> tuple[str, ...]:
    """A comma-separated list of map names (`crlf,delbs`), each one of `allowed`.

    Raises:
        ValueError: a name is not an allowed map, or two maps take the same byte.
    """
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in allowed]
    if unknown:
        raise ValueError(f"unknown map {', '.join(unknown)} (maps here: {', '.join(allowed)})")
    taken = [MAPS[name][0] for name in names]
    if len(set(taken)) != len(taken):
        raise ValueError(f"{text!r}: two maps change the same byte")
    return names


class ByteMap:
    """Maps applied to a stream of bytes, one pass a chunk."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._table = {MAPS[name][0]: MAPS[name][1] for name in self.names}
        self._pattern = re.compile(b"|".join(re.escape(key) for key in self._table)) \
            if self._table else None

    def __bool__(self) -> bool:
        return bool(self._table)

    def __call__(self, data: bytes) -> bytes:
        """`data` mapped (unchanged without maps)."""
        if self._pattern is None:
            return data
        return self._pattern.sub(lambda found: self._table[found.group()], data)


def mapped_chunks(chunks: Sequence[tuple[int, bytes]],
                  names: object) -> list[tuple[int, bytes]]:
    """A session's received chunks as it showed them: its header's `imap` applied to each
    (unchanged when it has none, or an unreadable one)."""
    try:
        byte_map = ByteMap(parse_map(",".join(names), INPUT_MAPS)) \
            if isinstance(names, list) else None
    except (ValueError, TypeError):
        byte_map = None
    if not byte_map:
        return list(chunks)
    return [(t_ns, byte_map(data)) for t_ns, data in chunks]


def parse_maps(imap: str, omap: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(input maps, output maps) of `--imap` and `--omap`.

    Raises:
        ValueError: an unknown map.
    """
    return parse_map(imap, INPUT_MAPS), parse_map(omap)
