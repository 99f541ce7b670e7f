"""Framing: any chunking gives the same lines, each stamped with its first byte's time."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from bootlab.core.capture.lines import LineFramer


def frame(data: bytes, cuts: list[int]) -> list[tuple[int, bytes, int | None, bool]]:
    framer = LineFramer()
    out = []
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    for i, (a, b) in enumerate(pairwise(bounds)):
        out += framer.feed(data[a:b], i)
    last = framer.flush()
    lines = [*out, *([last] if last else [])]
    return [(line.number, line.raw, line.t_ns, line.terminated) for line in lines]


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=30))
def test_chunking_never_changes_the_lines(data: bytes, cuts: list[int]) -> None:
    whole = [(n, raw, term) for n, raw, _, term in frame(data, [])]
    chunked = [(n, raw, term) for n, raw, _, term in frame(data, cuts)]
    assert chunked == whole
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()
    assert [raw for _, raw, _ in whole] == expected


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=20))
def test_each_line_carries_the_time_of_its_first_byte(data: bytes, cuts: list[int]) -> None:
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    chunk_of = {}
    for i, (a, b) in enumerate(pairwise(bounds)):
        for position in range(a, b):
            chunk_of[position] = i
    framer = LineFramer()
    lines = []
    for i, (a, b) in enumerate(pairwise(bounds)):
        lines += framer.feed(data[a:b], i)
    last = framer.flush()
    lines += [last] if last else []
    for line in lines:
        assert line.t_ns == chunk_of[line.offset]
        assert data[line.offset:line.offset + len(line.raw)] == line.raw


def test_partial_line_is_visible_before_its_newline() -> None:
    framer = LineFramer()
    assert framer.feed(b"U-Boot 2023.01\r\nboard log", 5) != []
    partial = framer.partial
    assert partial is not None and partial.raw == b"board log" and partial.t_ns == 5
    assert framer.feed(b"in: ", 9) == []
    partial = framer.partial
    assert partial is not None and partial.raw == b"board login: " and partial.t_ns == 5


def test_a_line_without_newline_is_cut_at_the_cap_and_nothing_is_lost() -> None:
    framer = LineFramer(max_line=1000)
    pieces = []
    for i in range(50):
        pieces += framer.feed(b"x" * 100, i)
    last = framer.flush()
    pieces += [last] if last else []
    assert b"".join(p.raw for p in pieces) == b"x" * 5000
    assert all(len(p.raw) <= 1100 for p in pieces)
    assert {p.number for p in pieces} == {1}


def test_one_megabyte_line() -> None:
    framer = LineFramer()
    lines = framer.feed(b"a" * (1 << 20) + b"\r\nnext\n", 1)
    assert [len(line.raw) for line in lines] == [(1 << 20) + 1, 4]


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=20))
def test_a_block_gives_any_of_its_lines_as_its_lines_list_does(data: bytes,
                                                              cuts: list[int]) -> None:
    framer = LineFramer(max_line=64)
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    for i, (a, b) in enumerate(pairwise(bounds)):
        block = framer.feed_block(data[a:b], i)
        lines = block.lines()
        terminated = [line for line in lines if line.terminated]
        assert block.count == len(terminated) == block.raw.count(b"\n")
        starts = [0] + [at + 1 for at in range(len(block.raw) - 1) if block.raw[at] == 10]
        assert [block.line(start, block.number + k) for k, start in
                enumerate(starts[:block.count])] == terminated
        assert lines[len(terminated):] == ([block.tail] if block.tail else [])
