"""Sessions are lossless, owner-only, append-only, and load whatever survived."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bootlab.core.capture.session import (
    SessionError,
    SessionWriter,
    iter_sessions,
    load_session,
    session_path,
)

META = {"label": "quiet", "board": "bbb", "port": "/dev/ttyUSB0", "baud": 115200,
        "profile": "linux", "settings": {"bootloader": {"bootdelay": "0"}, "cmdline": "quiet"}}


def write(path: Path, chunks: list[bytes]) -> None:
    writer = SessionWriter(path, META, start_ns=0)
    for i, chunk in enumerate(chunks):
        writer.rx(chunk, i * 1000)
    writer.close(10**9)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(st.lists(st.binary(min_size=1, max_size=200), max_size=20))
def test_every_byte_and_chunk_time_survives(tmp_path: Path, chunks: list[bytes]) -> None:
    path = session_path(tmp_path, "x")
    write(path, chunks)
    session = load_session(path)
    assert session.chunks == [(i * 1000, c) for i, c in enumerate(chunks)]
    assert session.data == b"".join(chunks)
    assert session.notices == []


def test_rx_records_are_what_json_dumps_writes(tmp_path: Path) -> None:
    chunks = [bytes(range(256)), b'"\\\x7f\xff']
    write(tmp_path / "s.jsonl", chunks)
    records = (tmp_path / "s.jsonl").read_text("ascii").splitlines()[1:3]
    assert records == [json.dumps({"t": i * 1000, "rx": chunk.decode("latin-1")},
                                  separators=(",", ":")) for i, chunk in enumerate(chunks)]


def test_metadata_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"x"])
    meta = load_session(path).meta
    assert {k: meta[k] for k in META} == META
    assert meta["version"] == 1 and meta["bootlab"] and meta["started_iso"]


def test_file_is_owner_only_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"x"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        SessionWriter(path, META)


def test_sent_bytes_and_redacted_secrets(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, META, start_ns=0)
    writer.rx(b"Password: ", 1)
    writer.tx(b"hunter2\r", 2, secret=True)
    writer.tx(b"ls\r", 3)
    writer.close(4)
    assert b"hunter2" not in path.read_bytes()
    assert load_session(path).sent == [(2, 8), (3, b"ls\r")]


def test_buffered_records_reach_the_file_within_the_flush_interval(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, META, start_ns=0)
    writer.rx(b"early", 1)
    writer.flush()
    assert b"early" in path.read_bytes()
    writer.close()


def test_truncated_file_loads_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"line one\r\n", b"line two\r\n"])
    data = path.read_bytes()
    cut = data.index(b"line two") + 3
    path.write_bytes(data[:cut])
    session = load_session(path)
    assert session.data == b"line one\r\n"
    assert any("cut off" in n for n in session.notices)


def test_corrupt_record_is_skipped_and_named(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"a", b"b", b"c"])
    lines = path.read_bytes().split(b"\n")
    lines[2] = b'{"t": 1, "rx": '
    path.write_bytes(b"\n".join(lines))
    session = load_session(path)
    assert session.data == b"ac"
    assert any("line 3" in n for n in session.notices)


def test_future_version_is_read_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [b"abc"])
    lines = path.read_text().split("\n")
    header = json.loads(lines[0])
    header["version"] = 99
    lines[0] = json.dumps(header)
    path.write_text("\n".join(lines))
    session = load_session(path)
    assert session.data == b"abc"
    assert any("newer bootlab" in n for n in session.notices)


@pytest.mark.parametrize(("content", "reason"), [
    (b"", "empty"),
    (b"hello world\n", "not a bootlab session"),
    (b"\x00\xff\xfe garbage", "not a bootlab session"),
])
def test_not_a_session(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionError, match=reason):
        load_session(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="cannot read"):
        load_session(tmp_path / "nope.jsonl")


def test_split_cuts_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, META, start_ns=0)
    writer.rx(b"boot one\r\nU-Boot", 1)
    writer.split(1, 10, "next.jsonl")
    writer.close(2)
    assert load_session(path).data == b"boot one\r\n"


def test_listing_skips_other_files(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", [b"x"])
    (tmp_path / "b.jsonl").write_text('{"something": "else"}\n')
    (tmp_path / "c.txt").write_text("x")
    assert [p.name for p in iter_sessions(tmp_path)] == ["a.jsonl"]
