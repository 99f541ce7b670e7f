"""Tests for bootlab.core.capture.exporters: asciicast and JSON Lines exports of any Source."""

from __future__ import annotations

import base64
import json
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.core.capture.exporters import asciicast, jsonl
from bootlab.core.capture.linetime import chunk_line_time
from bootlab.core.capture.session import Session, SessionWriter
from bootlab.core.capture.sources import Source, open_source
from bootlab.core.capture.text import clean

STARTED = 1_700_000_000.25
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def session_source(chunks: list[tuple[int, bytes]], meta: dict[str, Any] | None = None) -> Source:
    """A Source for a session held in memory."""
    session = Session(Path("mem.jsonl"), {"started": STARTED} if meta is None else meta, chunks)
    return Source(session.path, "session", session.data,
                  chunk_line_time(*session.chunk_offsets()), session.meta, [], session)


def events(lines: list[str]) -> tuple[dict[str, Any], list[tuple[float, str]]]:
    header = json.loads(lines[0])
    body = [json.loads(line) for line in lines[1:]]
    assert all(kind == "o" for _, kind, _ in body)
    return header, [(t, text) for t, _, text in body]


def assert_safe(text: str) -> None:
    """Only SGR colour sequences may reach the player; the line ends in "\\r\\n" or nothing."""
    bare = _SGR.sub("", text).removesuffix("\r\n")
    assert "\x1b" not in bare, repr(text)
    assert _UNSAFE.search(bare) is None, repr(text)


# --- asciicast -------------------------------------------------------------------------------


def test_asciicast_session_is_safe_and_timed_by_first_byte() -> None:
    chunks = [
        (0, b"U-Boot \x1b[1;32m2024.01\x1b[0m\r\n\x1b]52;c;ZWNobyBwd25lZA==\x07clip"),
        (1_000_000, b"board\r\n\x1b]0;evil ti"),   # a title change split over two reads
        (2_000_000, b"tle\x07Hit any key\x1b["),     # a CSI cursor move split over two reads
        (3_500_000, b"2J\x1b[10;1Hcleared\r\n\xc2\x9b6n\xc3"),  # 8-bit CSI; split "é"
        (4_000_000, b"\xa9t\xe9 \x1bP+q\x1b\\done\r\nlogin: "),
    ]
    lines = list(asciicast(session_source(chunks, {"started": STARTED, "label": "quiet",
                                                   "board": "rpi\x1b]0;x\x07"})))
    assert all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    header, cast = events(lines)
    assert header == {"version": 2, "width": 120, "height": 40, "timestamp": 1_700_000_000,
                      "title": "quiet - rpi"}
    assert cast == [
        (0.0, "U-Boot \x1b[1;32m2024.01\x1b[0m\r\n"),
        (0.0, "clipboard\r\n"),
        (0.001, "Hit any keycleared\r\n"),
        (0.0035, "ét\ufffd done\r\n"),
        (0.004, "login: "),
    ]
    for _, text in cast:
        assert_safe(text)


def test_asciicast_size_and_title_from_file_name(tmp_path: Path) -> None:
    path = tmp_path / "boot.log"
    path.write_bytes(b"hello\n")
    header, cast = events(list(asciicast(open_source(path), width=80, height=24)))
    assert header == {"version": 2, "width": 80, "height": 24, "title": "boot.log"}
    assert cast == [(0.0, "hello\r\n")]


def test_asciicast_without_host_times_plays_on_printk_time(tmp_path: Path) -> None:
    path = tmp_path / "capture.log"
    path.write_bytes(b"U-Boot 2024.01\r\nStarting kernel ...\r\n"
                     b"\x1b[32m[    0.000000]\x1b[0m Booting Linux\r\n"
                     b"[    1.250000] VFS: Mounted root\r\n"
                     b"[    0.900000] out of order\r\n"
                     b"Welcome\r\n"
                     b"<6>[    2.500000] late\r\n")
    _, cast = events(list(asciicast(open_source(path))))
    assert [t for t, _ in cast] == [0.0, 0.0, 0.0, 1.25, 1.25, 1.25, 2.5]
    assert cast[1][1] == "Starting kernel ...\r\n"


def test_asciicast_grabserial_uses_its_host_times(tmp_path: Path) -> None:
    path = tmp_path / "grab.log"
    path.write_bytes(b"[0.000000 0.000000] U-Boot\n[0.500000 0.500000] Starting kernel ...\n"
                     b"[0.000000 1.250000] [    0.000000] Booting Linux\n")
    _, cast = events(list(asciicast(open_source(path))))
    assert cast == [(0.0, "U-Boot\r\n"), (0.5, "Starting kernel ...\r\n"),
                    (1.75, "[    0.000000] Booting Linux\r\n")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=24), max_size=12), st.data())
def test_asciicast_never_passes_an_escape(pieces: list[bytes], data: st.DataObject) -> None:
    nasty = [b"\x1b]52;c;", b"\x07", b"\x1b[", b"2J", b"\x1bP", b"\x1b\\", b"\x9b", b"\x1b[31m",
             b"\r", b"\n", b"\x08", b"\x00", b"\xc2\x9b", b"\xe2\x80"]
    stream = b"".join(piece + data.draw(st.sampled_from(nasty)) for piece in pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    bounds = [0, *cuts, len(stream)]
    chunks = [(i, stream[a:b]) for i, (a, b) in enumerate(pairwise(bounds))]
    _, cast = events(list(asciicast(session_source(chunks))))
    for _, text in cast:
        assert_safe(text)
    assert len(cast) == stream.count(b"\n") + (not stream.endswith(b"\n") and bool(stream))


# --- jsonl -----------------------------------------------------------------------------------


def decode_jsonl(lines: list[str]) -> bytes:
    """Rebuild the stream from a jsonl export."""
    records = [json.loads(line) for line in lines]
    if not records:
        return b""
    data = b"\n".join(base64.b64decode(r["b64"]) for r in records)
    return data if records[-1].get("unterminated") else data + b"\n"


def test_jsonl_session_fields() -> None:
    chunks = [(0, b"U-Boot\r"), (250_000_000, b"\nStart"), (500_000_000, b"ing\x1b]0;t\x07\r\n"),
              (750_000_000, b"\xffbad\r\nlogin: ")]
    records = [json.loads(line) for line in jsonl(session_source(chunks))]
    assert records == [
        {"line": 1, "t": 0.0, "epoch": STARTED, "b64": base64.b64encode(b"U-Boot\r").decode(),
         "text": "U-Boot"},
        {"line": 2, "t": 0.25, "epoch": STARTED + 0.25,
         "b64": base64.b64encode(b"Starting\x1b]0;t\x07\r").decode(), "text": "Starting"},
        {"line": 3, "t": 0.75, "epoch": STARTED + 0.75,
         "b64": base64.b64encode(b"\xffbad\r").decode(), "text": "\ufffdbad"},
        {"line": 4, "t": 0.75, "epoch": STARTED + 0.75,
         "b64": base64.b64encode(b"login: ").decode(), "text": "login: ", "unterminated": True},
    ]


def test_jsonl_without_start_or_times(tmp_path: Path) -> None:
    path = tmp_path / "plain.log"
    path.write_bytes(b"a\n\nb\x00")
    records = [json.loads(line) for line in jsonl(open_source(path))]
    assert [(r["line"], r["t"], r["epoch"], r["text"]) for r in records] == [
        (1, None, None, "a"), (2, None, None, ""), (3, None, None, "b\u2400")]
    grab = tmp_path / "grab.log"
    grab.write_bytes(b"[0.000000 0.000000] a\n[0.500000 0.500000] b\n")
    records = [json.loads(line) for line in jsonl(open_source(grab))]
    assert [(r["t"], r["epoch"]) for r in records] == [(0.0, None), (0.5, None)]


def test_jsonl_session_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, {"label": "x"}, start_ns=0)
    stream = bytes(range(256)) * 3
    for i in range(0, len(stream), 100):
        writer.rx(stream[i:i + 100], i * 1000)
    writer.close(t_ns=10**9)
    source = open_source(path)
    assert decode_jsonl(list(jsonl(source))) == stream
    started = source.meta["started"]
    for line in jsonl(source):
        record = json.loads(line)
        assert record["epoch"] == round(started + record["t"], 6)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300), st.data())
def test_jsonl_round_trips_every_byte(stream: bytes, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    bounds = [0, *cuts, len(stream)]
    chunks = [(i * 1000, stream[a:b])
              for i, (a, b) in enumerate(pairwise(bounds))]
    source = session_source(chunks)
    lines = list(jsonl(source))
    assert decode_jsonl(lines) == stream
    # Each line carries the time of the read that brought its first byte.
    offset = 0
    for line in lines:
        record = json.loads(line)
        first = next(i for i, (a, b) in enumerate(pairwise(bounds))
                     if a <= offset < b)
        assert record["t"] == chunks[first][0] / 1e9
        assert record["text"] == clean(base64.b64decode(record["b64"]))
        offset += len(base64.b64decode(record["b64"])) + 1
    # The same stream without chunk times (a plain file) round-trips too.
    plain = Source(Path("x.log"), "plain", stream, None)
    assert decode_jsonl(list(jsonl(plain))) == stream


def test_jsonl_of_a_large_session_has_a_line_per_line() -> None:
    """Its speed is a figure of bench/bench_analyze.py (machines here are shared and noisy)."""
    line = b"[    1.234567] usb 1-1: new high-speed USB device number 2 using dwc2\r\n"
    stream = line * (2 * 1024 * 1024 // len(line))
    chunks = [(i * 1000, stream[i:i + 512]) for i in range(0, len(stream), 512)]
    exported = list(jsonl(session_source(chunks)))
    assert len(exported) == stream.count(b"\n")
    assert decode_jsonl(exported) == stream


def test_csv_export_keeps_device_text_from_running_as_a_formula() -> None:
    from bootlab.core.analysis.pipeline import analyze
    from bootlab.core.analysis.profiles import load_profile
    from bootlab.core.render.tables import sheet_text, to_csv

    assert sheet_text("=1+1") == "'=1+1" and sheet_text("U-Boot") == "U-Boot"
    log = b"U-Boot 2024.01\r\n=cmd|' /C calc'!A0 eth0: Link is Up - 1Gbps/Full\r\n"
    rows = to_csv(analyze(log, load_profile("linux"))).splitlines()
    assert rows[1].endswith(",U-Boot 2024.01")
    assert any(",'=cmd|" in row for row in rows) and not any(",=cmd" in row for row in rows)
