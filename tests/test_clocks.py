"""Two clocks, one timeline: the clock fit, the console-enable burst, placed milestones."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.built_sessions import kernel, lines, load, write_session
from support.paths import example_sessions

from bootlab.core.analysis.clocks import ReadClock, fit_clocks, unify

DEFAULT = example_sessions("default")
QUIET = example_sessions("quiet")


@pytest.mark.parametrize("path", DEFAULT, ids=lambda p: p.name)
def test_qemu_burst_is_the_first_kernel_lines(path: Path) -> None:
    source, analysis = load(path)
    boot = unify(analysis, source).boots[0]
    assert boot.burst is not None
    # `Booting Linux` (line 78) arrives 0.5-0.9 s after `Starting kernel` with the first
    # half second of kernel log; the burst ends before `console [ttyAMA0] enabled` (189).
    assert (boot.burst.first_line, boot.burst.last_line) == (78, 188)
    assert boot.burst.kernel_span_ms > 3 * boot.burst.host_span_ms
    assert 150 < boot.burst.delay_ms < 400
    assert boot.fit is not None and boot.fit.late == boot.burst.lines
    assert boot.fit.uncertainty_ms < 1.0
    assert any("buffered until the console was enabled" in note for note in boot.notes)


@pytest.mark.parametrize("path", DEFAULT, ids=lambda p: p.name)
def test_qemu_milestones_in_the_burst_are_placed_by_printk_time(path: Path) -> None:
    source, analysis = load(path)
    boot = unify(analysis, source).boots[0]
    assert boot.fit is not None
    placed = {m.id: m for m in boot.milestones}
    linux, calibrate = placed["linux"], placed["calibrate"]
    assert linux.basis == calibrate.basis == "kernel-fit"
    assert linux.t_s == pytest.approx(boot.fit.offset_s)
    milestone = analysis.boots[0].reached("calibrate")
    assert milestone is not None and milestone.host_s is not None
    assert milestone.kernel_s is not None
    assert calibrate.t_s == pytest.approx(boot.fit.offset_s + milestone.kernel_s)
    assert milestone.host_s - calibrate.t_s > 0.15  # its arrival was that late
    # Lines printed live agree with the fit: their own arrival time is kept.
    done, freed = placed["kernel_done"], analysis.boots[0].reached("kernel_done")
    assert freed is not None and freed.kernel_s is not None
    assert done.basis == "host" and done.uncertainty_ms < 5
    assert done.t_s == pytest.approx(boot.fit.offset_s + freed.kernel_s, abs=0.002)
    starting = placed["starting_kernel"]
    assert boot.kernel_entry_gap is not None
    gap, uncertainty = boot.kernel_entry_gap
    assert gap == pytest.approx(boot.fit.offset_s - starting.t_s)
    assert 0.2 < gap < 0.5 and uncertainty < 5


@pytest.mark.parametrize("path", QUIET, ids=lambda p: p.name)
def test_quiet_boot_has_no_kernel_clock(path: Path) -> None:
    source, analysis = load(path)
    boot = unify(analysis, source).boots[0]
    assert boot.fit is None and boot.burst is None and boot.kernel_entry_gap is None
    assert {m.basis for m in boot.milestones} == {"host"}
    assert len(boot.milestones) == len(analysis.boots[0].milestones)


def test_host_uncertainty_is_the_read_granularity(tmp_path: Path) -> None:
    # 40 bytes in one read at 115200 baud took 3.47 ms on the wire; the previous read was
    # 1 s earlier, so the wire time bounds how early the line's first byte came.
    path = write_session(tmp_path / "s.jsonl", [
        (0.0, b"U-Boot 2016.03 (Mar 14 2016 - 10:02:11 +0100)\r\n"),
        (1.0, b"Starting kernel ...\r\n\r\n[    0.000000] Bo"),
        (1.0004, b"oting Linux on physical CPU 0x0\r\n"),
    ])
    source, analysis = load(path)
    boot = unify(analysis, source).boots[0]
    starting = next(m for m in boot.milestones if m.id == "starting_kernel")
    assert starting.basis == "host"
    assert starting.uncertainty_ms == pytest.approx(40 * 10 / 115.2)
    linux = next(m for m in boot.milestones if m.id == "linux")
    # Three bytes of its read on the wire (0.26 ms): the whole line is live.
    assert linux.basis == "host" and linux.t_s == pytest.approx(1.0)


def test_latency_timer_from_the_header_widens_uncertainty(tmp_path: Path) -> None:
    chunks = lines((0.0, "U-Boot 2016.03 (Mar 14 2016 - 10:02:11 +0100)"),
                   (0.5, "Starting kernel ..."))
    plain = write_session(tmp_path / "a.jsonl", chunks)
    timed = write_session(tmp_path / "b.jsonl", chunks, latency_timer_ms=16)
    placed = []
    for path in (plain, timed):
        source, analysis = load(path)
        placed.append(unify(analysis, source).boots[0].milestones[-1])
    assert placed[1].uncertainty_ms == pytest.approx(placed[0].uncertainty_ms + 16)


def test_burst_detected_in_a_built_log_with_an_offset_fit(tmp_path: Path) -> None:
    early = [(0.0, "Booting Linux on physical CPU 0x0"), (0.0, "Linux version 4.4.6"),
             (0.05, "Memory: 505924K/524288K available"),
             (0.2, "Calibrating delay loop... 351.43 BogoMIPS (lpj=1757184)"),
             (0.44, "pid_max: default: 32768 minimum: 301"),
             (0.5, "console [ttyS0] enabled")]
    live = [(0.6, "NET: Registered protocol family 16"), (0.9, "Serial: AMBA driver"),
            (1.2, "Freeing unused kernel memory: 196K"), (1.21, "Run /sbin/init as init process")]
    chunks = lines((0.0, "U-Boot 2016.03"), (2.0, "Starting kernel ..."))
    chunks += kernel(3.0, *early, arrive=3.5) + kernel(3.0, *live)
    source, analysis = load(write_session(tmp_path / "s.jsonl", chunks))
    boot = unify(analysis, source).boots[0]
    assert boot.fit is not None and boot.fit.offset_s == pytest.approx(3.0, abs=1e-3)
    assert boot.burst is not None and (boot.burst.first_line, boot.burst.lines) == (3, 5)
    assert boot.burst.delay_ms == pytest.approx(500, abs=1)
    placed = {m.id: m for m in boot.milestones}
    assert placed["calibrate"].basis == "kernel-fit"
    assert placed["calibrate"].t_s == pytest.approx(3.2, abs=1e-3)
    assert placed["init"].basis == "host"
    assert boot.kernel_entry_gap is not None
    assert boot.kernel_entry_gap[0] == pytest.approx(1.0, abs=1e-3)


def test_one_early_outlier_does_not_move_the_fit() -> None:
    from bootlab.core.analysis.phases import ParsedLine

    parsed = [ParsedLine(n, "", "", 10.0 + k, k, None) for n, k in enumerate([1.0, 2.0, 3.0], 1)]
    parsed.append(ParsedLine(4, "", "", 9.0 + 4.0, 4.0, None))  # a second too early
    fit, late, burst = fit_clocks(parsed)
    assert fit is not None and fit.offset_s == pytest.approx(10.0)
    assert burst is None and late == frozenset()


def test_dmesg_has_only_the_kernel_clock(tmp_path: Path) -> None:
    path = tmp_path / "dmesg.txt"
    path.write_text("[    0.000000] Booting Linux on physical CPU 0x0\n"
                    "[    0.004000] Calibrating delay loop... 351.43 BogoMIPS (lpj=1757184)\n"
                    "[    1.200000] Run /sbin/init as init process\n")
    source, analysis = load(path)
    timeline = unify(analysis, source)
    assert timeline.clock == "kernel"
    assert [(m.id, m.t_s, m.basis) for m in timeline.milestones] == [
        ("linux", 0.0, "kernel"), ("calibrate", 0.004, "kernel"), ("init", 1.2, "kernel")]


def test_grabserial_log_knows_line_starts_only(tmp_path: Path) -> None:
    path = tmp_path / "grab.log"
    path.write_text("[0.000000 0.000000] U-Boot 2016.03\n"
                    "[1.000000 1.000000] Starting kernel ...\n"
                    "[1.400000 0.400000] [    0.000000] Booting Linux on physical CPU 0x0\n"
                    "[1.500000 0.100000] [    0.100000] Run /sbin/init as init process\n")
    source, analysis = load(path)
    clock = ReadClock.of(source)
    assert clock is not None and not clock.exact and clock.byte_time(5) is None
    boot = unify(analysis, source).boots[0]
    assert boot.fit is not None and boot.fit.offset_s == pytest.approx(1.4)
    assert all(m.uncertainty_ms == pytest.approx(10 / 115.2) for m in boot.milestones)


def test_peak_rate_sees_a_console_faster_than_its_baud() -> None:
    clock = ReadClock([0, 1000, 2000], [0.0, 0.01, 0.02], 3000, 115200, True)
    rate = clock.peak_rate(0, 3000, 0.1)
    assert rate == pytest.approx(30000)  # 3000 bytes within 0.1 s
    assert clock.peak_rate(5000, 6000) is None


def test_output_backed_up_behind_a_slow_console_is_late_but_no_burst(tmp_path: Path) -> None:
    # Ten 80-byte lines printed within 9 ms drain at 115200 baud, 6.9 ms each: the later
    # ones arrive late, but paced, not at once.
    text = "x" * 64
    printed = [(i * 0.001, text) for i in range(10)]
    chunks = lines((0.0, "U-Boot 2016.03"), (0.5, "Starting kernel ..."))
    chunks += [(1.0 + i * 80 * 10 / 115200, f"[{k:12.6f}] {m}".encode() + b"\r\n")
               for i, (k, m) in enumerate(printed)]
    chunks += kernel(1.0, (0.5, "Run /sbin/init as init process"))
    source, analysis = load(write_session(tmp_path / "s.jsonl", chunks))
    boot = unify(analysis, source).boots[0]
    assert boot.burst is None and boot.fit is not None
    assert boot.fit.offset_s == pytest.approx(1.0)
    late = sum(1 for i in range(10) if i * (80 * 10 / 115.2 - 1) > 10)
    assert boot.fit.late == late > 0
    assert boot.fit.worst_ms == pytest.approx(9 * (80 * 10 / 115.2 - 1), abs=0.01)
    assert any("output queued behind the console" in note for note in boot.notes)


def test_printk_clock_counting_from_power_on_gives_no_entry_gap(tmp_path: Path) -> None:
    chunks = lines((0.0, "U-Boot 2016.03"), (1.0, "Starting kernel ..."))
    chunks += kernel(-2.0, (3.1, "Booting Linux on physical CPU 0x0"),
                     (3.5, "Run /sbin/init as init process"))
    source, analysis = load(write_session(tmp_path / "s.jsonl", chunks))
    boot = unify(analysis, source).boots[0]
    assert boot.fit is not None and boot.fit.offset_s == pytest.approx(-2.0)
    assert boot.kernel_entry_gap is None
    assert any("does not start at kernel entry" in note for note in boot.notes)
