"""Property fuzzing of the byte-level parsers: framing, stamps, cleaning, log import, sessions.

Every input ends in a result or the module's own error with a message, never another exception;
the results keep their invariants (lossless framing, no control character shown, sane times).
"""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzcount import count
from support.strategies import device_bytes, fuzz, log_bytes, session_file

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.lines import LineFramer
from bootlab.core.capture.session import SessionError, SessionWriter, load_session
from bootlab.core.capture.sources import KINDS, SourceError, open_source
from bootlab.core.capture.stamps import parse_stamp
from bootlab.core.capture.text import clean
from bootlab.core.render import tables

pytestmark = pytest.mark.usefixtures("fuzz_counts")
LINUX = load_profile("linux")
SHOWN_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
SGR = re.compile(r"\x1b\[[0-9;:]*m")
SCRATCH = Path(tempfile.mkdtemp(prefix="bootlab-fuzz-"))


@fuzz(1000)
@given(stream=device_bytes, cuts=st.lists(st.integers(0, 600), max_size=8),
       max_line=st.integers(1, 40))
def test_framer_is_lossless_for_any_reads(stream: bytes, cuts: list[int], max_line: int) -> None:
    count("lines.LineFramer")
    framer = LineFramer(max_line=max_line)
    lines = []
    start = 0
    for t, cut in enumerate([*sorted(min(c, len(stream)) for c in cuts), len(stream)]):
        lines += framer.feed(stream[start:cut], t)
        start = cut
    last = framer.flush()
    lines += [last] if last else []
    assert b"".join(ln.raw + b"\n" * ln.terminated for ln in lines) == stream
    ended = 0
    for line in lines:
        assert b"\n" not in line.raw and line.number == ended + 1
        assert stream[line.offset:line.offset + len(line.raw)] == line.raw
        ended += line.terminated


@fuzz(1500)
@given(raw=device_bytes)
def test_cleaned_text_holds_no_control_and_stamps_are_sane(raw: bytes) -> None:
    count("text.clean")
    count("stamps.parse_stamp")
    plain = clean(raw)
    assert SHOWN_CONTROL.search(plain) is None
    coloured = clean(raw, keep_sgr=True)
    assert SHOWN_CONTROL.search(SGR.sub("", coloured)) is None
    stamp = parse_stamp(plain)
    assert 0 <= stamp.end <= len(plain)
    assert stamp.kernel_s is None or stamp.boot_s is None
    for value in (stamp.kernel_s, stamp.boot_s):
        assert value is None or (math.isfinite(value) and value >= 0)


@fuzz(400)
@given(data=log_bytes, kind=st.sampled_from([None, "grabserial", "dmesg", "plain"]))
def test_any_log_imports_and_analyses_or_is_refused_clearly(data: bytes,
                                                            kind: str | None) -> None:
    count(f"sources.open_source ({kind or 'detected'})")
    path = SCRATCH / "boot.log"
    path.write_bytes(data)
    try:
        source = open_source(path, kind)
    except SourceError as error:
        assert str(path) in str(error)
        return
    assert source.kind in KINDS
    analysis = analyze(source.data, LINUX, source.line_time)
    tables.to_json(analysis, {"path": str(path)})
    tables.to_text(analysis)
    if source.line_time is not None:
        for number in range(1, analysis.lines + 1):
            t = source.line_time(number, 0)
            assert t is None or math.isfinite(t)


@fuzz(300)
@given(data=session_file())
def test_any_session_file_loads_or_is_refused_clearly(data: bytes) -> None:
    count("session.load_session")
    path = SCRATCH / "s.jsonl"
    path.write_bytes(data)
    try:
        session = load_session(path)
    except SessionError as error:
        assert str(path) in str(error)
        return
    assert isinstance(session.meta, dict)
    assert sum(len(chunk) for _, chunk in session.chunks) == len(session.data)
    assert all(isinstance(t, int) for t, _ in session.chunks)
    assert all(isinstance(s, bytes) or type(s) is int for _, s in session.sent)


@fuzz(300)
@given(chunks=st.lists(device_bytes, min_size=1, max_size=8), data=st.data())
def test_a_cut_session_keeps_every_record_written_before_the_cut(chunks: list[bytes],
                                                                  data: st.DataObject) -> None:
    count("session.load_session (cut)")
    path = SCRATCH / "cut.jsonl"
    path.unlink(missing_ok=True)
    writer = SessionWriter(path, {"label": "cut"}, start_ns=0)
    for t, chunk in enumerate(chunks):
        writer.rx(chunk, t)
    writer.close(len(chunks))
    whole = path.read_bytes()
    body = whole.index(b"\n") + 1
    cut = body + data.draw(st.integers(0, 1 << 16)) % (len(whole) - body + 1)
    path.write_bytes(whole[:cut])
    session = load_session(path)
    kept = whole[:cut].split(b"\n")
    records = whole.split(b"\n")[1:-1]                   # one per chunk, then the end record
    complete = sum(1 for i, record in enumerate(records) if i + 1 < len(kept)
                   and kept[i + 1] == record)
    assert session.data == b"".join(chunks[:complete])
    if not whole[:cut].endswith((b"}", b"\n")):
        assert any("cut off" in notice for notice in session.notices)
