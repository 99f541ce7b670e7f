"""The echo written per read is the per-line echo, byte for byte (`textlog`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bootlab.core.capture.lines import LineFramer
from bootlab.core.capture.text import clean, clean_lines
from bootlab.core.capture.textlog import Echo, block_texts, time_label

LINE_BYTES = st.lists(st.sampled_from([b"a", b"Z", b" ", b"\t", b"\r", b"\b", b"\x1b[31m",
                                       b"\x1b]0;t\x07", b"\x00", b"\xff", b"\xc3\xa9", b"\x7f",
                                       b"\x9b", b"[ 1.0]"]), max_size=12).map(b"".join)


@given(st.lists(LINE_BYTES, min_size=1, max_size=8))
def test_a_block_s_lines_are_cleaned_as_one_line_is(lines: list[bytes]) -> None:
    raw = b"".join(line + b"\n" for line in lines)
    assert block_texts(raw) == [clean(line) for line in lines]


@given(st.lists(LINE_BYTES, max_size=8).map(lambda ls: b"\n".join(ls)))
def test_plain_lines_are_left_as_they_are_and_others_cleaned(raw: bytes) -> None:
    assert clean_lines(raw) == "\n".join(clean(line) for line in raw.split(b"\n")) \
        or b"\r" in raw or b"\b" in raw


def per_line(chunks: list[tuple[bytes, int]]) -> str:
    """The echo line by line, as grabserial prints it (the reference)."""
    framer, out, first, previous = LineFramer(), [], None, 0.0
    lines = [line for data, t_ns in chunks for line in framer.feed(data, t_ns)]
    tail = framer.flush()
    for line in [*lines, *([tail] if tail else [])]:
        assert line.t_ns is not None
        t = line.t_ns / 1e9
        first = t if first is None else first
        out.append(f"[{t - first:11.6f} {t - first - previous:9.6f}] {clean(line.raw)}\n")
        previous = t - first
    return "".join(out)


@given(st.lists(st.tuples(st.lists(LINE_BYTES, max_size=5).map(lambda ls: b"\r\n".join(ls)),
                          st.booleans()), min_size=1, max_size=6))
def test_the_echo_per_read_is_the_echo_per_line(reads: list[tuple[bytes, bool]]) -> None:
    chunks = [(data + (b"\r\n" if newline else b""), 1_000_000 * (i + 1) ** 2)
              for i, (data, newline) in enumerate(reads)]
    framer, echo, text = LineFramer(), Echo(), []
    for data, t_ns in chunks:
        text.append(echo.block(framer.feed_block(data, t_ns)))
    tail = framer.flush()
    if tail is not None:
        text.append(echo.line(tail))
    assert "".join(text) == per_line(chunks)


def test_time_labels_in_every_mode() -> None:
    from bootlab.core.capture.lines import Line

    line = Line(5, b"[    1.250000] x", 3_500_000_000)
    text = clean(line.raw)
    assert time_label("elapsed", line, text) == "3.500000"
    assert time_label("elapsed", line, text, references=[(1, 0.5), (6, 3.0)]) == "3.000000"
    assert time_label("delta", line, text, before_ns=3_000_000_000) == "+0.500000"
    assert time_label("delta", line, text) == ""
    assert time_label("kernel", line, text) == "1.250000"
    assert time_label("wall", line, text) == ""
    assert time_label("wall", line, text, epoch_s=0.0).endswith(":03.500")
    assert time_label("off", line, text) == ""
