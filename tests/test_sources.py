"""Tests for bootlab.core.capture.sources: every kind of boot log read into one uniform Source."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import SessionWriter
from bootlab.core.capture.sources import Source, SourceError, detect_kind, open_source

BOOT = [
    "U-Boot 2024.01 (Jan 08 2024 - 12:00:00 +0000)",
    "DRAM:  512 MiB",
    "Hit any key to stop autoboot:  0 ",
    "6193664 bytes read in 262 ms (22.5 MiB/s)",
    "Starting kernel ...",
    "",
    "[    0.000000] Booting Linux on physical CPU 0x0",
    "[    0.000000] Linux version 6.6.0 (dev@host) #1 SMP",
    "[    0.812345] VFS: Mounted root (ext4 filesystem) readonly on device 179:2.",
    "[    0.900000] Run /sbin/init as init process",
    "Welcome to Buildroot",
    "buildroot login: ",
]
"""Board lines of one boot; the host saw them at HOST_TIMES."""
HOST_TIMES = [0.0, 0.012, 0.5, 1.8, 2.0, 2.0001, 2.3, 2.3001, 3.1, 3.2, 3.6, 3.7]


def grabserial_lines(lines: list[str], times: list[float], restarts: tuple[int, ...] = (),
                     clock_start: float | None = None, elapsed: bool = True) -> list[str]:
    """Lines as grabserial prints them: `-t` gives `[elapsed delta]`, `-T` a clock instead.

    `restarts` are the indexes of lines matching grabserial's `-m` pattern: its timer restarts
    at such a line's start, showing from the next line on.
    """
    out = []
    base = times[0]
    previous = 0.0
    for index, (text, t) in enumerate(zip(lines, times, strict=True)):
        since = t - base
        delta = since - previous
        fields = []
        if clock_start is not None:
            seconds = clock_start + t
            h, rest = divmod(seconds, 3600)
            m, s = divmod(rest, 60)
            fields.append(f"{int(h) % 24:02d}:{int(m):02d}:{s:09.6f}")
        if elapsed:
            fields.append(f"{since:4.6f}")
        fields.append(f"{delta:2.6f}")
        out.append(f"[{' '.join(fields)}] {text}")
        previous = since
        if index in restarts:
            base, previous = t, 0.0
    return out


def write(tmp_path: Path, content: bytes | str, name: str = "boot.log") -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def milestones(source: Source) -> dict[str, tuple[float | None, float | None]]:
    """Milestone id -> (host_s, kernel_s) found by the linux profile."""
    result = analyze(source.data, load_profile("linux"), source.line_time)
    return {m.id: (m.host_s, m.kernel_s) for m in result.milestones}


# --- grabserial ------------------------------------------------------------------------------


def test_grabserial_elapsed_form_times_and_text(tmp_path: Path) -> None:
    text = "\n".join(grabserial_lines(BOOT, HOST_TIMES)) + "\n"
    source = open_source(write(tmp_path, text))
    assert source.kind == "grabserial"
    assert source.data == ("\n".join(BOOT) + "\n").encode()
    assert source.meta == {"imported_from": "grabserial"}
    assert source.notices == []
    assert source.line_time is not None
    for number, t in enumerate(HOST_TIMES, start=1):
        assert source.line_time(number, 0) == pytest.approx(t, abs=2e-6)
    assert source.line_time(len(BOOT) + 1, 0) is None
    found = milestones(source)
    assert found["bootloader"][0] == pytest.approx(0.0, abs=2e-6)
    assert found["linux"] == (pytest.approx(2.3, abs=2e-6), 0.0)
    assert found["login"][0] == pytest.approx(3.7, abs=2e-6)


def test_grabserial_timer_restart_and_trailing_report(tmp_path: Path) -> None:
    # `grabserial -t -m "^Starting kernel" -i "login:"`: the timer restarts after line 5, and
    # grabserial ends with its instantpat report, preceded by an empty line of its own.
    lines = grabserial_lines(BOOT, HOST_TIMES, restarts=(4,))
    assert lines[5].startswith("[0.000100 0.000100] ")  # elapsed restarted from 0
    text = "\n".join(lines) + "\n\nThe instantpat: \"login:\" was matched at 1.700000\n"
    source = open_source(write(tmp_path, text))
    assert source.kind == "grabserial"
    assert source.data == ("\n".join(BOOT) + "\n").encode()
    assert source.line_time is not None
    for number, t in enumerate(HOST_TIMES, start=1):
        assert source.line_time(number, 0) == pytest.approx(t, abs=5e-6)
    assert len(source.notices) == 2
    assert "restarted its timer 1 time(s)" in source.notices[0]
    assert "line 6" in source.notices[0]
    assert "left out 2 line(s)" in source.notices[1]
    assert "The instantpat" in source.notices[1]
    assert milestones(source)["login"][0] == pytest.approx(3.7, abs=5e-6)


def test_grabserial_several_restarts_and_verbose_preamble(tmp_path: Path) -> None:
    times = [0.5 * i for i in range(20)]
    stamped = grabserial_lines([f"line {i}" for i in range(20)], times, restarts=(3, 9))
    assert stamped[10].startswith("[0.500000 0.500000] line 10")
    text = "Opening serial port /dev/ttyUSB0\nUse Control-C to stop...\n" + "\n".join(stamped)
    source = open_source(write(tmp_path, text))
    assert source.kind == "grabserial"
    assert source.data.startswith(b"line 0\nline 1\n")
    assert source.data.endswith(b"\nline 19")  # unterminated, as in the file
    assert source.line_time is not None
    for number, t in enumerate(times, start=1):
        assert source.line_time(number, 0) == pytest.approx(t, abs=5e-6)
    assert "2 time(s)" in source.notices[0] and "file line 7" in source.notices[0]
    assert "left out 2 line(s)" in source.notices[1]
    assert "Opening serial port" in source.notices[1]


def test_grabserial_clock_form(tmp_path: Path) -> None:
    # -T: the wall clock instead of elapsed, crossing midnight.
    lines = grabserial_lines(BOOT, HOST_TIMES, clock_start=86400 - 2.5, elapsed=False)
    assert lines[0].startswith("[23:59:57.500000 0.000000] U-Boot")
    assert lines[-1].startswith("[00:00:01.200000 0.100000] ")
    source = open_source(write(tmp_path, "\n".join(lines) + "\n"))
    assert source.kind == "grabserial"
    assert source.data == ("\n".join(BOOT) + "\n").encode()
    assert source.line_time is not None
    for number, t in enumerate(HOST_TIMES, start=1):
        assert source.line_time(number, 0) == pytest.approx(t, abs=1e-5)


def test_grabserial_clock_and_elapsed_form(tmp_path: Path) -> None:
    lines = grabserial_lines(BOOT, HOST_TIMES, restarts=(4,), clock_start=3600.0)
    assert lines[1].startswith("[01:00:00.012000 0.012000 0.012000] DRAM")
    source = open_source(write(tmp_path, "\n".join(lines) + "\n"))
    assert source.kind == "grabserial"
    assert source.data == ("\n".join(BOOT) + "\n").encode()
    assert source.line_time is not None
    assert source.line_time(len(BOOT), 0) == pytest.approx(HOST_TIMES[-1], abs=5e-6)


def test_grabserial_padded_and_large_elapsed(tmp_path: Path) -> None:
    text = "[   0.000000  0.000000] first\n[1234.500000 1234.500000]  second\n[1234.5 0.0]\n"
    source = open_source(write(tmp_path, text), kind="grabserial")
    assert source.data == b"first\n second\n\n"
    assert source.line_time is not None
    assert source.line_time(2, 0) == pytest.approx(1234.5)
    assert source.line_time(3, 0) == pytest.approx(1234.5)


def test_grabserial_keeps_line_bytes_exact(tmp_path: Path) -> None:
    raw = b"[0.000000 0.000000] \xff\xfe bad utf-8 \x00 nul \x1b[31mred\r\n[0.100000 0.100000] end"
    source = open_source(write(tmp_path, raw))
    assert source.kind == "grabserial"
    assert source.data == b"\xff\xfe bad utf-8 \x00 nul \x1b[31mred\r\nend"


def test_grabserial_asked_for_but_absent(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no line starts with a grabserial time stamp"):
        open_source(write(tmp_path, "\n".join(BOOT)), kind="grabserial")


# --- plain captures and dmesg ----------------------------------------------------------------


def test_plain_capture_uses_kernel_times(tmp_path: Path) -> None:
    raw = ("\r\n".join(BOOT) + "\r\n").encode()  # picocom/minicom captures keep the CRs
    source = open_source(write(tmp_path, raw))
    assert source.kind == "plain"
    assert source.data == raw
    assert source.line_time is None
    assert source.notices == []
    found = milestones(source)
    assert found["linux"] == (None, 0.0)
    assert found["root_mounted"] == (None, pytest.approx(0.812345))
    assert found["init"] == (None, pytest.approx(0.9))
    assert found["bootloader"] == (None, None)


def test_dmesg(tmp_path: Path) -> None:
    raw = b"\n".join(line.encode() for line in BOOT if line.startswith("[")) + b"\n"
    source = open_source(write(tmp_path, raw))
    assert (source.kind, source.data, source.line_time) == ("dmesg", raw, None)
    assert source.meta == {"imported_from": "dmesg"}
    assert milestones(source)["root_mounted"] == (None, pytest.approx(0.812345))


def test_dmesg_raw_levels(tmp_path: Path) -> None:
    raw = (b"<5>[    0.000000] Linux version 6.6.0 (dev@host) #1 SMP\n"
           b"<6>[    0.000000] Machine model: Raspberry Pi 4\n"
           b"<6>[    1.500000] VFS: Mounted root (ext4 filesystem) on device 179:2.\n"
           b"<6>[    1.700000] Run /sbin/init as init process\n")
    source = open_source(write(tmp_path, raw))
    assert (source.kind, source.data) == ("dmesg", raw)
    found = milestones(source)
    assert found["linux"] == (None, 0.0)
    assert found["init"] == (None, pytest.approx(1.7))


def test_journalctl_short_monotonic(tmp_path: Path) -> None:
    raw = (b"-- Boot 1f2e3d4c5b6a --\n"
           b"[    0.000000] pi kernel: Linux version 6.6.0 (dev@host) #1 SMP\n"
           b"[    1.500000] pi kernel: VFS: Mounted root (ext4 filesystem) on device 179:2.\n"
           b"[    1.700000] pi kernel: Run /sbin/init as init process\n")
    source = open_source(write(tmp_path, raw))
    assert source.kind == "dmesg"
    assert source.meta == {"imported_from": "journalctl"}
    assert source.data.split(b"\n")[1] == b"[    0.000000] Linux version 6.6.0 (dev@host) #1 SMP"
    assert "3 line(s)" in source.notices[0]
    assert milestones(source)["init"] == (None, pytest.approx(1.7))


def test_mostly_stamped_capture_is_not_dmesg_below_the_threshold(tmp_path: Path) -> None:
    stamped = [f"[    {i}.000000] message {i}" for i in range(8)]
    assert detect_kind(("\n".join(["U-Boot 2024.01", "Starting kernel ...", *stamped])
                        + "\n").encode()) == "plain"
    assert detect_kind(("\n".join(["U-Boot 2024.01", *stamped, "", "", *stamped])).encode()) \
        == "dmesg"


def test_detect_kind() -> None:
    assert detect_kind(b"just text\n") == "plain"
    assert detect_kind(b"\n\n  \n") == "plain"
    assert detect_kind(b'{"format": "bootlab-session", "version": 1}\n') == "session"
    assert detect_kind(b'{"format": "something-else"}\n') == "plain"
    assert detect_kind(b"{ not json bootlab-session\n") == "plain"
    assert detect_kind(b"[    0.000000][    T0] Booting Linux\n") == "dmesg"
    assert detect_kind(b"[0.000000 0.000000] U-Boot\nplain\n[0.1 0.1] x\n") == "grabserial"
    assert detect_kind(b"[0.000000 0.000000] U-Boot\nplain\nplain\n") == "plain"


def test_odd_bytes_are_read_unchanged(tmp_path: Path) -> None:
    raw = b"\x00\x00\xff\xfe U-Boot \xc3\x28 invalid\n" + b"x" * (1 << 20) + b"\n\x00tail"
    source = open_source(write(tmp_path, raw))
    assert (source.kind, source.data, source.notices) == ("plain", raw, [])


def test_utf16_capture_is_converted(tmp_path: Path) -> None:
    text = "\r\n".join(BOOT) + "\r\n"
    source = open_source(write(tmp_path, b"\xff\xfe" + text.encode("utf-16-le")))
    assert source.kind == "plain"
    assert source.data == text.encode()
    assert "UTF-16-LE" in source.notices[0]
    assert milestones(source)["linux"] == (None, 0.0)


def test_utf8_bom_is_removed(tmp_path: Path) -> None:
    source = open_source(write(tmp_path, b"\xef\xbb\xbfU-Boot 2024.01\n"))
    assert source.data == b"U-Boot 2024.01\n"
    assert "byte order mark" in source.notices[0]
    assert "bootloader" in milestones(source)


# --- sessions --------------------------------------------------------------------------------


def write_session(path: Path, chunks: list[tuple[int, bytes]]) -> None:
    writer = SessionWriter(path, {"label": "quiet", "board": "rpi4"}, start_ns=0)
    for t_ns, data in chunks:
        writer.rx(data, t_ns)
    writer.close(t_ns=chunks[-1][0] + 1)


def test_session_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "20240101-120000-quiet-01.jsonl"
    stream = ("\r\n".join(BOOT)).encode()
    # Cut the stream into reads that end mid-line, one read per 40 bytes, 0.1 s apart.
    chunks = [(i * 100_000_000, stream[i * 40:(i + 1) * 40]) for i in range(len(stream) // 40 + 1)]
    write_session(path, chunks)
    source = open_source(path)
    assert source.kind == "session"
    assert source.data == stream
    assert source.session is not None and source.session.chunks == chunks
    assert source.meta["label"] == "quiet" and source.meta["board"] == "rpi4"
    assert isinstance(source.meta["started"], float)
    assert source.notices == []
    assert source.line_time is not None
    offset = stream.index(b"Starting kernel")
    assert source.line_time(5, offset) == pytest.approx((offset // 40) / 10)
    found = milestones(source)
    assert found["linux"][0] == pytest.approx((stream.index(b"[    0.000000] Booting") // 40) / 10)
    assert found["linux"][1] == 0.0
    assert open_source(path, kind="session").data == stream


def test_truncated_session_loads_with_notice(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    write_session(path, [(0, b"U-Boot 2024.01\r\n"), (1_000_000, b"Starting kernel ...\r\n"),
                         (2_000_000, b"[    0.000000] Linux version 6.6.0\r\n")])
    raw = path.read_bytes()
    path.write_bytes(raw[: raw.index(b'{"t":2000000') + 20])  # killed mid-record
    source = open_source(path)
    assert source.kind == "session"
    assert source.data == b"U-Boot 2024.01\r\nStarting kernel ...\r\n"
    assert any("cut off" in notice for notice in source.notices)


def test_session_without_received_bytes(tmp_path: Path) -> None:
    path = tmp_path / "idle.jsonl"
    writer = SessionWriter(path, {}, start_ns=0)
    writer.close(t_ns=5)
    source = open_source(path)
    assert (source.kind, source.data) == ("session", b"")
    assert source.notices == ["the session holds no received bytes"]
    assert source.line_time is not None and source.line_time(1, 0) is None


# --- errors ----------------------------------------------------------------------------------


def test_errors(tmp_path: Path) -> None:
    cases = [
        (tmp_path / "missing.log", None, "missing.log: no such file"),
        (tmp_path, None, "is a directory"),
        (write(tmp_path, b"", "empty.log"), None, "empty.log: empty file"),
        (write(tmp_path, "text\n", "a.log") / "x", None, "cannot read"),
        (write(tmp_path, "text\n", "b.log"), "session", "b.log: not a bootlab session"),
        (write(tmp_path, "text\n", "c.log"), "minicom", "unknown log kind 'minicom'"),
    ]
    for path, kind, message in cases:
        with pytest.raises(SourceError, match=message):
            open_source(path, kind)


def test_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SourceError, match="not a regular file"):
        open_source(fifo)


def test_explicit_kind_wins_over_content(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, [(0, b"[0.000000 0.000000] looks like grabserial\n")])
    assert open_source(path).kind == "session"
    plain = open_source(path, kind="plain")
    assert plain.kind == "plain" and plain.data.startswith(b'{"format":"bootlab-session"')
