"""A long session is read through its index: the same chunks, meta and notices as a loaded
session, random access to any record, a cached index that is rebuilt when stale, and an
analysis that streams the file yet finds exactly what a whole load finds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bootlab.core.analysis.loading import load
from bootlab.core.capture import session as session_module
from bootlab.core.capture import session_index as si
from bootlab.core.capture import sources
from bootlab.core.capture.session import SessionWriter, append_meta, load_session
from bootlab.core.capture.session_index import (
    IndexedChunks,
    build_index,
    index_path,
    session_index,
)

EXAMPLE = Path(__file__).parent / "data" / "qemu-115200-default.jsonl"
META = {"label": "x", "board": "b", "port": "/dev/null", "baud": 115200, "profile": "linux",
        "settings": {}}


def write(path: Path, chunks: list[bytes]) -> None:
    """A session with received chunks at 1 ms steps, sent bytes and events between them."""
    writer = SessionWriter(path, META, start_ns=0)
    for i, chunk in enumerate(chunks):
        writer.rx(chunk, i * 1_000_000)
        if i % 3 == 1:
            writer.tx(b"\r", i * 1_000_000 + 1)
            writer.event("note", i * 1_000_000 + 2, text="x")
    writer.close(len(chunks) * 1_000_000)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(st.lists(st.binary(min_size=1, max_size=300), max_size=30), st.data())
def test_the_index_reads_what_the_loader_loads(tmp_path: Path, chunks: list[bytes],
                                               data: st.DataObject) -> None:
    path = tmp_path / "s.jsonl"
    path.unlink(missing_ok=True)
    write(path, chunks)
    loaded = load_session(path)
    index = build_index(path)
    assert index.meta == loaded.meta and index.notices == loaded.notices
    assert index.read(0, len(index)) == loaded.chunks
    assert b"".join(index.blocks(size=data.draw(st.integers(1, 500)))) == loaded.data
    for i in range(len(index)):
        assert index.lines_before[i] == b"".join(c for _, c in loaded.chunks[:i]).count(b"\n")
    # random access lands on the record asked for, in any order
    every = IndexedChunks(index)
    for i in data.draw(st.lists(st.integers(0, max(len(chunks) - 1, 0)), max_size=10)):
        if chunks:
            assert every[i] == loaded.chunks[i]
            assert every[-1] == loaded.chunks[-1]


def test_a_moment_finds_the_chunks_read_by_then(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"line %d\n" % i for i in range(1000)])
    index = build_index(path)
    assert index.at_time(-1) == 0
    assert index.at_time(499_999_999) == 500
    assert index.at_time(500_000_000) == 501
    assert IndexedChunks(index)[index.at_time(700_000_000) - 1] == (700_000_000, b"line 700\n")
    assert index.lines_before[700] == 700


def test_a_split_ends_the_stream_inside_a_chunk(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, META, start_ns=0)
    for i in range(4):
        writer.rx(b"abcd", i)
    writer.split(5, 6, "next.jsonl")
    writer.close(6)
    index = build_index(path)
    assert index.read(0, 9) == load_session(path).chunks == [(0, b"abcd"), (1, b"ab")]
    assert b"".join(index.blocks(3)) == b"abcdab"


def test_a_truncated_session_still_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cut.jsonl"
    raw = EXAMPLE.read_bytes()
    path.write_bytes(raw[:len(raw) * 2 // 3])
    monkeypatch.setattr(sources, "CACHE_BYTES", 0)  # every session through its index
    indexed = load(path)
    assert indexed.source.stream is not None and indexed.source.held is None
    assert any("cut off" in notice for notice in indexed.analysis.notices)
    monkeypatch.setattr(sources, "CACHE_BYTES", 1 << 40)
    whole = load(path)
    assert whole.source.stream is None
    assert [(m.id, m.line, m.host_s) for m in indexed.analysis.milestones] == \
        [(m.id, m.line, m.host_s) for m in whole.analysis.milestones]
    assert indexed.analysis.notices == whole.analysis.notices
    assert indexed.source.data == whole.source.data


def test_the_index_kept_beside_a_session_is_used_and_rebuilt_when_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"boot %d\n" % i for i in range(50)])
    first = session_index(path, cache=True)
    kept = index_path(path)
    assert kept.exists() and oct(kept.stat().st_mode & 0o777) == "0o600"
    built: list[Path] = []
    monkeypatch.setattr(si, "build_index", lambda p: built.append(p) or build_index(p))
    assert session_index(path).to_bytes() == first.to_bytes() and built == []
    append_meta(path, label="relabelled")  # the session changed: its index is stale
    assert session_index(path).meta["label"] == "relabelled" and built == [path]
    kept.write_text("{not an index")  # a damaged index is rebuilt too
    assert session_index(path).meta["label"] == "relabelled" and len(built) == 2


def test_a_stale_index_never_reads_the_wrong_record(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"x" * 100 for _ in range(10)])
    index = build_index(path)
    path.write_bytes(path.read_bytes().replace(b'"rx"', b'"ry"'))
    with pytest.raises(si.SessionError, match="changed since it was indexed"):
        index.read(0, 10)


def test_a_big_session_is_analysed_in_blocks(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis of an indexed session never joins its stream: memory holds one block."""
    path = tmp_path / "big.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    monkeypatch.setattr(sources, "CACHE_BYTES", 0)
    monkeypatch.setattr(si, "_BLOCK", 512)
    sizes: list[int] = []
    blocks = si.SessionIndex.blocks

    def watched(self: si.SessionIndex, size: int = 512) -> object:
        for block in blocks(self, size):
            sizes.append(len(block))
            yield block

    monkeypatch.setattr(si.SessionIndex, "blocks", watched)
    streamed = load(path)
    assert streamed.source.held is None and len(sizes) > 10 and max(sizes) < 8192
    monkeypatch.setattr(sources, "CACHE_BYTES", 1 << 40)
    whole = load(path)
    assert [(m.id, m.line, m.host_s, m.values) for m in streamed.analysis.milestones] == \
        [(m.id, m.line, m.host_s, m.values) for m in whole.analysis.milestones]
    assert streamed.analysis.lines == whole.analysis.lines


def test_an_index_of_another_file_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"a\n"] * 5)
    session_index(path, cache=True)
    data = json.loads(index_path(path).read_bytes().partition(b"\n")[0])  # its header line
    os.utime(path, ns=(data["mtime_ns"] + 10**9, data["mtime_ns"] + 10**9))
    assert session_index(path).mtime_ns != data["mtime_ns"]


def test_the_read_clock_of_a_big_session_is_its_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    from bootlab.core.analysis.clocks import ReadClock

    whole = ReadClock.of(sources.open_source(EXAMPLE))
    monkeypatch.setattr(sources, "CACHE_BYTES", 0)
    indexed = sources.open_source(EXAMPLE)
    clock = ReadClock.of(indexed)
    assert indexed.held is None and whole is not None and clock is not None
    assert (clock.offsets, clock.times_s, clock.size, clock.baud, clock.exact) == \
        (whole.offsets, whole.times_s, whole.size, whole.baud, whole.exact)


def fields(index: si.SessionIndex) -> tuple[object, ...]:
    return (index.meta, index.notices, index.file_offsets, index.times_ns,
            index.stream_offsets, index.lines_before, index.stream_size, index.size,
            index.mtime_ns)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(st.lists(st.binary(min_size=1, max_size=300), max_size=30), st.data())
def test_the_writer_keeps_the_index_a_pass_over_the_file_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes],
        data: st.DataObject) -> None:
    """A big session (every session here) gets its index from its writer at close: the one
    a pass over the file builds, meta records and a split included; what was noted went to
    the part file at each flush, so the writer held none of it in memory."""
    monkeypatch.setattr(session_module, "CACHE_BYTES", 0)
    path = tmp_path / "s.jsonl"
    path.unlink(missing_ok=True)
    index_path(path).unlink(missing_ok=True)
    writer = SessionWriter(path, META, start_ns=0)
    total = sum(map(len, chunks))
    split = data.draw(st.none() | st.integers(0, total))
    for i, chunk in enumerate(chunks):
        writer.rx(chunk, i * 1_000_000)
        if i % 4 == 2:
            writer.meta(i * 1_000_000 + 1, label=f"now {i}", extra={"n": i})
        writer.flush()
        assert not writer._index.values   # spilled: nothing kept in memory
    if split is not None:
        writer.split(len(chunks) * 1_000_000, split, "next.jsonl")
    writer.close(len(chunks) * 1_000_000 + 1)
    assert not path.with_name(path.name + ".idx.part").exists()
    if not chunks:
        return
    assert index_path(path).exists()
    kept = si._load(index_path(path), path, path.stat().st_size, path.stat().st_mtime_ns)
    assert kept is not None
    assert fields(kept) == fields(build_index(path))
    assert IndexedChunks(kept)[:] == load_session(path).chunks


def test_a_recording_opens_through_the_index_its_writer_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "CACHE_BYTES", 1000)
    monkeypatch.setattr(si, "CACHE_BYTES", 1000)
    path = tmp_path / "s.jsonl"
    write(path, [b"line %d\n" % i for i in range(300)])
    assert index_path(path).exists()
    built: list[Path] = []
    monkeypatch.setattr(si, "build_index", lambda p: built.append(p) or build_index(p))
    assert session_index(path).stream_size == sum(len(b"line %d\n" % i) for i in range(300))
    assert built == []
    # A writer killed before it closed leaves what it noted; the first open replaces it.
    part = path.with_name(path.name + ".idx.part")
    part.write_bytes(b"\0" * 64)
    index_path(path).unlink()
    assert session_index(path).stream_size > 0 and built == [path] and not part.exists()
    small = tmp_path / "small.jsonl"      # under the size: no index, no part left behind
    write(small, [b"a\n"])
    assert not index_path(small).exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "s.jsonl", "s.jsonl.idx", "small.jsonl"]


def test_a_session_that_could_not_be_written_gets_no_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "CACHE_BYTES", 0)
    path = tmp_path / "s.jsonl"
    failures: list[SessionWriter] = []
    writer = SessionWriter(path, META, start_ns=0, on_error=failures.append)
    writer.rx(b"abc\n", 1)
    writer.flush()
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: (_ for _ in ()).throw(
        OSError(28, "No space left on device")))
    writer.rx(b"def\n", 2)
    writer.flush()
    monkeypatch.setattr(os, "write", real_write)
    writer.close(3)
    assert failures and not index_path(path).exists()
    assert load_session(path).data == b"abc\n"
