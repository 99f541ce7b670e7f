"""Whole-stream analysis at scale: a stream read in blocks gives what the whole stream gives,
the file kind is counted without a list of lines, and `--json` text is the same data."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.core.analysis.pipeline import Analysis, analyze, analyze_blocks
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.sources import _JOURNAL_NOTE, _PRINTK, detect_kind, open_source
from bootlab.core.render import jsontext

LINUX = load_profile("linux")
EXAMPLE = Path(__file__).parent / "data" / "qemu-115200-quiet.jsonl"
BOOT = open_source(EXAMPLE).data


def summary(analysis: Analysis) -> object:
    return ([(b.index, b.first_line, b.partial, b.text_before,
              [(m.id, m.line, m.offset, m.values, m.fallback) for m in b.milestones])
             for b in analysis.boots], analysis.lines,
            [(r.marker, r.line, r.reason) for r in analysis.rejected])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3 * len(BOOT)), max_size=12), st.integers(1, 3))
def test_a_stream_in_blocks_is_analysed_as_a_whole(cuts: list[int], boots: int) -> None:
    """Any cut of a reboot loop (a quiet boot, whose fallbacks wait for the following lines,
    repeated) into blocks: the same boots, milestones, lines and rejections."""
    data = (BOOT + b"\r\n") * boots + b"login: "
    edges = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    blocks = [data[a:b] for a, b in pairwise(edges)]
    assert summary(analyze_blocks(blocks, LINUX)) == summary(analyze(data, LINUX))


def test_blank_text_before_a_boots_first_milestone_is_found_across_blocks() -> None:
    data = b"\r\n  \r\n" + b"x" * 10 + b"\r\n" + BOOT
    whole = analyze(data, LINUX)
    assert whole.boots[0].text_before is True
    blocks = [data[i:i + 3] for i in range(0, len(data), 3)]
    assert summary(analyze_blocks(blocks, LINUX)) == summary(whole)


def _kind_by_lines(data: bytes) -> str:
    """The kind rule applied line by line (what the counting at C speed must equal)."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        return "plain"
    lines = [line for line in lines if not _JOURNAL_NOTE.match(line)]
    return "dmesg" if sum(1 for line in lines if _PRINTK.match(line)) >= 0.9 * len(lines) \
        else "plain"


LINES = st.sampled_from([b"[    1.000000] kernel line", b"<6>[    2.500000] level", b"",
                         b"  ", b"\r", b"\t\x0b\x0c", b"-- Boot 0123 --", b"-- Boot 0123 --\r",
                         b"U-Boot 2024.01", b"[ 1.5] not printk", b"x\r", b"[    3.000000]"])


@given(st.lists(LINES, max_size=40), st.booleans())
def test_the_kind_is_counted_as_the_lines_say(lines: list[bytes], newline: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if newline else b"")
    if detect_kind(data) in ("session", "grabserial"):
        return
    assert detect_kind(data) == _kind_by_lines(data)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(JSON)
def test_json_text_is_the_same_data(value: object) -> None:
    assert json.loads(jsontext.dumps(value)) == json.loads(json.dumps(value))


def test_records_in_a_list_are_one_line_each() -> None:
    text = jsontext.dumps({"milestones": [{"id": "a", "values": {"n": 1}}, {"id": "b"}],
                           "notices": ["x"]})
    assert text == ('{\n "milestones": [\n  {"id": "a", "values": {"n": 1}},\n  {"id": "b"}\n'
                    ' ],\n "notices": [\n  "x"\n ]\n}\n')
