"""Fuzz the line framer: any bytes cut into any reads give lossless, correctly numbered lines."""

from __future__ import annotations

import atheris

with atheris.instrument_imports():
    from _common import main

    from bootlab.core.capture.lines import LineFramer


def one_input(data: bytes) -> None:
    """Feed the bytes in reads cut where the fuzzer says; check the lines give every byte back."""
    provider = atheris.FuzzedDataProvider(data)
    max_line = provider.ConsumeIntInRange(1, 64)
    cuts = provider.ConsumeIntListInRange(provider.ConsumeIntInRange(0, 8), 0, 1 << 16)
    stream = provider.ConsumeBytes(provider.remaining_bytes())
    framer = LineFramer(max_line=max_line)
    lines = []
    start = 0
    for t, cut in enumerate([*sorted(c % (len(stream) + 1) for c in cuts), len(stream)]):
        lines += framer.feed(stream[start:cut], t)
        start = cut
    last = framer.flush()
    if last is not None:
        lines.append(last)
    rebuilt = b"".join(line.raw + (b"\n" if line.terminated else b"") for line in lines)
    assert rebuilt == stream, "the framed lines lost or added bytes"
    assert framer.offset == len(stream)
    ended = 0
    for line in lines:
        assert b"\n" not in line.raw, "a line holds a newline"
        assert stream[line.offset:line.offset + len(line.raw)] == line.raw, "wrong offset"
        assert line.number == ended + 1, "wrong line number"
        ended += line.terminated


if __name__ == "__main__":
    main(one_input)
