"""Fuzz printk/bootloader stamp parsing and the cleaner on arbitrary device lines."""

from __future__ import annotations

import math
import re

import atheris

with atheris.instrument_imports():
    from _common import main

    from bootlab.core.capture.stamps import parse_stamp
    from bootlab.core.capture.text import clean, is_plain

_FORBIDDEN = {*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0)}
"""Code points no cleaned text may hold (C0 but tab, DEL, C1)."""


def one_input(data: bytes) -> None:
    """Clean a line, read its stamp; check nothing dangerous survives and the stamp is sane."""
    for keep_sgr in (False, True):
        text = clean(data, keep_sgr)
        shown = text
        if keep_sgr:
            # Only whole SGR sequences may remain; with them removed, nothing else may.
            shown = "".join(part for i, part in enumerate(_split_sgr(text)) if i % 2 == 0)
        assert not any(ord(ch) in _FORBIDDEN for ch in shown), repr(text)
    if is_plain(data):
        assert clean(data) == data.decode("ascii").removesuffix("\r")
    text = clean(data)
    stamp = parse_stamp(text)
    assert 0 <= stamp.end <= len(text)
    for value in (stamp.kernel_s, stamp.boot_s):
        assert value is None or (math.isfinite(value) and value >= 0)
    assert (stamp.kernel_s is None) or (stamp.boot_s is None)


def _split_sgr(text: str) -> list[str]:
    return re.split(r"(\x1b\[[0-9;:]*m)", text)


if __name__ == "__main__":
    main(one_input)
