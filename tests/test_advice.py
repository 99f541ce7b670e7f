"""Recommendations with predicted savings: on the QEMU sessions, on built logs of NAND/JFFS2 and
UBI boards, checked against A/B runs, and through `bootlab advise`."""

from __future__ import annotations

import json
import re
import shutil
from itertools import pairwise
from pathlib import Path
from typing import Literal

import pytest
from support.advise_cli import cli
from support.built_sessions import Chunk, kernel, lines, load, write_session
from support.paths import example_sessions

from bootlab.core.advice.predictions import ab_boots, check_predictions
from bootlab.core.advice.recommendation import Recommendation, rank
from bootlab.core.advice.rules import JFFS2_SEED, MIN_SAVING_MS, advise
from bootlab.core.advice.uart import ConsoleWrite, Uart, console_stall
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.board.kernel_read import trimmed_read_size
from bootlab.core.capture.sources import Source

DEFAULT = example_sessions("default")
QUIET = example_sessions("quiet")
FAST = example_sessions("bootdelay0")
DATA = Path(__file__).parent / "data"
PACED = DATA / "qemu-115200-default.jsonl"
PACED_QUIET = DATA / "qemu-115200-quiet.jsonl"
"""Boots recorded behind `run-board.sh --baud 115200` (uart-proxy.py: 11.52 kB/s through a
one-page pipe)."""
HASHES = 66
"""Progress lines of 64 '#' in the NAND log: 66 x 66 bytes = 4356 bytes."""


def by_id(recs: list[Recommendation]) -> dict[str, Recommendation]:
    return {r.id: r for r in recs}


def advice_for(path: Path) -> dict[str, Recommendation]:
    source, analysis = load(path)
    return by_id(advise(source, analysis))


def uboot(start: float, *extra: tuple[float, str]) -> list[Chunk]:
    return lines((start, "U-Boot 2016.03 (Mar 14 2016 - 10:02:11 +0100)"), (start + 0.001, ""),
                 (start + 0.002, "CPU: SAMA5D36"), (start + 0.01, "DRAM:  512 MiB"),
                 (start + 0.05, "NAND:  256 MiB"), (start + 0.08, "In:    serial"),
                 (start + 0.081, "Out:   serial"), (start + 0.082, "Err:   serial"),
                 (start + 0.1, "Net:   gmac0"), *extra)


def nand_jffs2_log(path: Path) -> Path:
    """A SAMA5D3 board: 1 s bootdelay, a 4 MiB NAND read with progress hashes for a 1.2 MB
    legacy uImage, a zImage decompressor, a measured delay loop, initcall_debug, a JFFS2 root
    without summary support (14 s scan), gigabit autonegotiation before login."""
    chunks = uboot(0.0)
    chunks += [(0.110, b"Hit any key to stop autoboot:  1 "), (1.110, b"\b\b\b 0 \r\n")]
    chunks += lines((1.112, "NAND read: device 0 offset 0x200000, size 0x400000"))
    chunks += lines(*((1.113 + i * 0.018, "#" * 64) for i in range(HASHES)))
    chunks += lines((2.316, " 4194304 bytes read: OK"),
                    (2.317, "## Booting kernel from Legacy Image at 22000000 ..."),
                    (2.318, "   Image Name:   Linux-4.4.6"),
                    (2.319, "   Image Type:   ARM Linux Kernel Image (uncompressed)"),
                    (2.320, "   Data Size:    1246156 Bytes = 1.2 MiB"),
                    (2.321, "   Load Address: 20008000"), (2.322, "   Entry Point:  20008000"),
                    (2.323, "   Verifying Checksum ... OK"),
                    (2.398, "   Loading Kernel Image ... OK"), (2.420, ""),
                    (2.421, "Starting kernel ..."), (2.422, ""))
    chunks += [(2.430, b"Uncompressing Linux..."), (2.980, b" done, booting the kernel.\r\n")]
    chunks += kernel(3.0, (0.0, "Booting Linux on physical CPU 0x0"),
                     (0.0, "Linux version 4.4.6 (builder@buildhost) (gcc version 5.3.0 "
                           "(Buildroot 2016.02) ) #1 Mon Mar 14 10:04:01 CET 2016"),
                     (0.0, "Machine model: Atmel SAMA5D3 Xplained"),
                     (0.0, "Kernel command line: console=ttyS0,115200 root=/dev/mtdblock5 "
                           "rootfstype=jffs2 rw initcall_debug ignore_loglevel"),
                     (0.001, "Console: colour dummy device 80x30"),
                     (0.002, "Calibrating delay loop... 351.43 BogoMIPS (lpj=1757184)"),
                     (0.242, "pid_max: default: 32768 minimum: 301"),
                     (0.26, "calling  atmel_pmc_init+0x0/0x20 @ 1"),
                     (0.2601, "initcall atmel_pmc_init+0x0/0x20 returned 0 after 93 usecs"),
                     arrive=3.3)
    chunks += kernel(3.0, (0.3, "console [ttyS0] enabled"),
                     (0.31, "calling  atmel_nand_driver_init+0x0/0x18 @ 1"),
                     (0.311, "nand: Micron MT29F2G08ABAEAWP"),
                     (0.52, "6 cmdlinepart partitions found on MTD device atmel_nand"),
                     (0.5203, "initcall atmel_nand_driver_init+0x0/0x18 returned 0 after "
                              "205312 usecs"),
                     (0.53, "calling  macb_driver_init+0x0/0x18 @ 1"),
                     (0.56, "macb f0028000.ethernet eth0: Cadence GEM rev 0x00020119 at "
                            "0xf0028000 irq 50 (3a:1f:34:08:54:54)"),
                     (0.561, "initcall macb_driver_init+0x0/0x18 returned 0 after 31000 usecs"),
                     (0.6, "calling  init_jffs2_fs+0x0/0xa0 @ 1"),
                     (0.6001, "jffs2: version 2.2. (NAND) © 2001-2006 Red Hat, Inc."),
                     (0.6002, "initcall init_jffs2_fs+0x0/0xa0 returned 0 after 92 usecs"),
                     (0.9, "ALSA device list:"), (0.9001, "  No soundcards found."),
                     (14.899, "jffs2: notice: (1) jffs2_build_xattr_subsystem: complete "
                              "building xattr subsystem, 0 of xdatum (0 unchecked, 0 orphan) "
                              "and 0 of xref (0 dead, 0 orphan) found."),
                     (14.9001, "VFS: Mounted root (jffs2 filesystem) on device 31:5."),
                     (14.901, "devtmpfs: mounted"),
                     (14.902, "Freeing unused kernel memory: 196K"),
                     (14.903, "Run /sbin/init as init process"))
    chunks += lines((17.95, "Starting logging: OK"), (18.25, "Starting network: "))
    chunks += kernel(3.0, (15.4, "macb f0028000.ethernet eth0: configuring for phy/rgmii link "
                                 "mode"),
                     (17.8, "macb f0028000.ethernet eth0: Link is Up - 1Gbps/Full - flow "
                            "control tx"))
    chunks += lines((20.85, "udhcpc: lease of 192.168.1.50 obtained, lease time 86400"),
                    (20.9, "OK"), (20.95, ""), (20.96, "Welcome to Buildroot"))
    chunks += [(20.97, b"buildroot login: ")]
    return write_session(path, chunks)


def ubi_log(path: Path) -> Path:
    """A NAND board with a UBI root: a 1.07 s attach by scanning 960 PEBs, and rootdelay=2."""
    chunks = uboot(0.0, (0.11, "Hit any key to stop autoboot:  0 "),
                     (0.112, "Starting kernel ..."), (0.113, ""))
    chunks += kernel(1.0, (0.0, "Booting Linux on physical CPU 0x0"),
                     (0.002, "Calibrating delay loop (skipped), value calculated using timer "
                             "frequency.. 48.00 BogoMIPS (lpj=240000)"),
                     (1.5, "ubi0: attaching mtd2"), (2.55, "ubi0: scanning is finished"),
                     (2.57, 'ubi0: attached mtd2 (name "rootfs", size 120 MiB)'),
                     (2.5701, "ubi0: PEB size: 131072 bytes (128 KiB), LEB size: 126976 bytes"),
                     (2.5702, "ubi0: min./max. I/O unit sizes: 2048/2048, sub-page size 2048"),
                     (2.5704, "ubi0: good PEBs: 960, bad PEBs: 0, corrupted PEBs: 0"),
                     (2.5707, "ubi0: available PEBs: 0, total reserved PEBs: 960, PEBs "
                              "reserved for bad PEB handling: 20"),
                     (2.6, "Waiting 2 sec before mounting root device..."),
                     (4.605, 'UBIFS (ubi0:0): UBIFS: mounted UBI device 0, volume 0, name '
                             '"rootfs", R/O mode'),
                     (4.606, "VFS: Mounted root (ubifs filesystem) readonly on device 0:13."),
                     (4.61, "Freeing unused kernel memory: 1024K"),
                     (4.62, "Run /sbin/init as init process"))
    chunks += lines((5.8, "Welcome to Buildroot"))
    chunks += [(5.81, b"buildroot login: ")]
    return write_session(path, chunks)


# --- the QEMU board ------------------------------------------------------------------------

@pytest.mark.parametrize("path", DEFAULT, ids=lambda p: p.name)
def test_qemu_default_bootdelay_predicts_the_countdown(path: Path) -> None:
    source, analysis = load(path)
    rec = by_id(advise(source, analysis))["bootdelay"]
    boot = analysis.boots[0]
    autoboot = boot.reached("autoboot")
    assert autoboot is not None and autoboot.host_s is not None
    after = boot.reached("kernel_loaded")
    assert after is not None and after.host_s is not None
    # The countdown is the autoboot phase up to the first line U-Boot prints after it.
    assert 1990 < rec.predicted_ms < (after.host_s - autoboot.host_s) * 1000
    assert rec.setting == "bootdelay" and rec.persist
    assert rec.evidence[0] == (autoboot.line, autoboot.text)
    assert rec.ab_command("socket://x:1") == ("bootlab ab socket://x:1 --variant base: --variant "
                                              "bootdelay0:bootdelay=0 --boots 5 --persist")


def kernel_message_bytes(source: Source, analysis: Analysis) -> int:
    """Bytes after `Starting kernel` up to login that `quiet` removes: every line up to init,
    and the printk-stamped lines after it."""
    boot = analysis.boots[0]
    start, init, login = (boot.reached(m) for m in ("starting_kernel", "init", "login"))
    assert start is not None and init is not None and login is not None
    raw = source.data.split(b"\n")
    return (sum(len(line) + 1 for line in raw[start.line:init.line - 1])
            + sum(len(line) + 1 for line in raw[init.line - 1:login.line]
                  if re.match(rb"\[\s*\d+\.\d+\]", line)))


@pytest.mark.parametrize("path", DEFAULT, ids=lambda p: p.name)
def test_qemu_default_console_cost_is_its_kernel_bytes_at_115200(path: Path) -> None:
    source, analysis = load(path)
    rec = by_id(advise(source, analysis))["console"]
    boot = analysis.boots[0]
    start, init = boot.reached("starting_kernel"), boot.reached("init")
    assert start is not None and init is not None and init.text.startswith("[")
    raw = source.data.split(b"\n")
    # The board README: ~14.4 kB up to Run /init.
    assert 14000 < sum(len(line) + 1 for line in raw[start.line:init.line - 1]) < 15000
    size = kernel_message_bytes(source, analysis)
    assert rec.bound_ms == pytest.approx(size * 10 / 115200 * 1000)
    # Without a transmit buffer between messages the kernel waits for every byte.
    assert rec.predicted_ms == pytest.approx(rec.bound_ms)
    assert rec.setting == "quiet" and rec.milestone == "login"
    assert [n for n, _ in rec.evidence] == [start.line, init.line]
    assert "faster than the board can print" in rec.detail  # QEMU's PL011
    assert "hold no console waits" in rec.detail


@pytest.mark.parametrize("path", [*QUIET, PACED_QUIET], ids=lambda p: p.name)
def test_qemu_quiet_prints_no_kernel_message(path: Path) -> None:
    """On this board quiet removes every kernel line (none is an error), as the model has it."""
    source, analysis = load(path)
    start = analysis.boots[0].reached("starting_kernel")
    assert start is not None
    after = source.data.split(b"\n")[start.line:]
    assert after and not any(re.search(rb"^\[\s*\d+\.\d+\]", line) for line in after)


# --- the console's transmit buffer --------------------------------------------------------

BAUD = 115200
MS_PER_BYTE = 10 / BAUD * 1000


def stall_ms(writes: list[ConsoleWrite], uart: Uart, stalled: bool = True) -> float:
    return console_stall(writes, BAUD, uart, stalled) * 1000.0


SPREAD = [ConsoleWrite(0.0, 100, True), ConsoleWrite(0.002, 700, True),
          ConsoleWrite(0.3, 50, False), ConsoleWrite(0.5, 3000, True)]


@pytest.mark.parametrize("stalled", [True, False])
def test_no_buffer_costs_every_kernel_byte(stalled: bool) -> None:
    assert stall_ms(SPREAD, Uart(0), stalled) == pytest.approx(3800 * MS_PER_BYTE)
    assert stall_ms(SPREAD, Uart(0, "empty"), stalled) == pytest.approx(3800 * MS_PER_BYTE)


@pytest.mark.parametrize("refill", ["room", "empty"])
def test_a_huge_buffer_costs_nothing(refill: Literal["room", "empty"]) -> None:
    assert stall_ms(SPREAD, Uart(10**9, refill)) == 0.0


def test_a_burst_larger_than_the_fifo_waits_for_the_excess() -> None:
    burst = [ConsoleWrite(1.0, 64, True) for _ in range(100)]  # 6400 bytes at once
    assert stall_ms(burst, Uart(4096)) == pytest.approx((6400 - 4096) * MS_PER_BYTE)
    # A buffer refilled only once empty: the first 4096 bytes must drain before the rest.
    assert stall_ms(burst, Uart(4096, "empty")) == pytest.approx(4096 * MS_PER_BYTE)


def test_a_fifo_drains_between_writes() -> None:
    # 1152 bytes take 100 ms. The second burst comes 50 ms after the first: half is gone.
    writes = [ConsoleWrite(0.0, 1152, True), ConsoleWrite(0.05, 1152, True)]
    assert stall_ms(writes, Uart(1152)) == pytest.approx(50.0)
    assert stall_ms(writes, Uart(1152, "empty")) == pytest.approx(50.0)


def test_recorded_waits_are_not_counted_twice() -> None:
    # 2304 bytes into a 1152-byte FIFO wait 100 ms. If that wait is in the recorded times
    # (a paced console), the write at 0.15 s finds 576 bytes queued and waits 50 ms more; if
    # not, it really comes at 0.25 s, when the FIFO is empty.
    writes = [ConsoleWrite(0.0, 2304, True), ConsoleWrite(0.15, 1152, True)]
    assert stall_ms(writes, Uart(1152), stalled=True) == pytest.approx(150.0)
    assert stall_ms(writes, Uart(1152), stalled=False) == pytest.approx(100.0)


def test_user_space_output_fills_the_buffer_but_is_not_a_saving() -> None:
    writes = [ConsoleWrite(0.0, 1152, False), ConsoleWrite(0.0, 1152, True)]
    assert stall_ms(writes, Uart(1152)) == pytest.approx(100.0)
    assert stall_ms(writes[:1], Uart(0)) == 0.0


# --- a boot recorded behind the QEMU board's 115200-baud uart-proxy -------------------------

def test_paced_boot_replays_its_printk_times_through_the_buffer() -> None:
    source, analysis = load(PACED)
    size = kernel_message_bytes(source, analysis)
    default = by_id(advise(source, analysis))["console"]
    assert default.predicted_ms == pytest.approx(size * MS_PER_BYTE) == default.bound_ms
    assert "waits are in the printk times already" in default.detail
    assert "faster than the board can print" not in default.detail
    # A FIFO: only the messages buffered before the console was enabled overflow it. They are
    # the stamped lines printed before `printk: console [ttyAMA0] enabled`.
    raw = source.data.split(b"\n")
    enabled = next(i for i, line in enumerate(raw) if b"console [ttyAMA0] enabled" in line)
    start = analysis.boots[0].reached("starting_kernel")
    assert start is not None
    burst = sum(len(line) + 1 for line in raw[start.line:enabled]
                if re.match(rb"\[\s*\d+\.\d+\]", line))
    assert 6000 < burst < 9000
    fifo = by_id(advise(source, analysis, Uart(4096)))["console"]
    assert fifo.predicted_ms == pytest.approx((burst - 4096) * MS_PER_BYTE, abs=5)
    # The proxy's pipe takes more only once empty: the burst waits for a whole page to drain.
    pipe = by_id(advise(source, analysis, Uart(4096, "empty")))["console"]
    assert 4096 * MS_PER_BYTE <= pipe.predicted_ms < default.predicted_ms
    assert pipe.bound_ms == default.bound_ms


@pytest.mark.parametrize("path", DEFAULT + QUIET + FAST, ids=lambda p: p.name)
def test_qemu_lpj_is_not_recommended_calibration_is_skipped(path: Path) -> None:
    assert "lpj" not in advice_for(path)


@pytest.mark.parametrize("path", DEFAULT + QUIET, ids=lambda p: p.name)
def test_qemu_verify_is_the_hash_time(path: Path) -> None:
    source, analysis = load(path)
    rec = by_id(advise(source, analysis))["verify"]
    assert [n for n, _ in rec.evidence] == [36, 50, 53, 67]
    # Each check from its start to the next line (line 50 hashes the 31 MB kernel).
    line_time = source.line_time
    assert line_time is not None
    raw = source.data.split(b"\n")
    times = {n: line_time(n, sum(len(x) + 1 for x in raw[:n - 1]))
             for n in (36, 37, 50, 51, 53, 54, 67, 68)}
    expected = sum((times[n + 1] or 0) - (times[n] or 0) for n in (36, 50, 53, 67)) * 1000
    assert rec.predicted_ms == pytest.approx(expected)
    assert 200 < rec.predicted_ms < 450 and rec.setting == "verify"


@pytest.mark.parametrize("path", QUIET, ids=lambda p: p.name)
def test_qemu_quiet_has_no_console_cost_left(path: Path) -> None:
    recs = advice_for(path)
    assert "console" not in recs and "bootdelay" in recs


@pytest.mark.parametrize("path", FAST, ids=lambda p: p.name)
def test_qemu_bootdelay0_has_no_countdown_to_save(path: Path) -> None:
    assert "bootdelay" not in advice_for(path)


def test_ranked_by_predicted_saving_with_nothing_below_the_floor() -> None:
    source, analysis = load(DEFAULT[0])
    recs = advise(source, analysis)
    assert [r.predicted_ms for r in recs] == sorted((r.predicted_ms for r in recs), reverse=True)
    assert all(r.predicted_ms >= MIN_SAVING_MS for r in recs)
    assert [r.id for r in recs][:2] == ["bootdelay", "console"]


def test_rank_keeps_the_median_boot_with_the_range() -> None:
    recs = [Recommendation("x", "X", ms, [], None, "", "login", source=str(ms))
            for ms in (300.0, 100.0, 200.0)]
    ranked = rank(recs)
    assert len(ranked) == 1
    assert (ranked[0].predicted_ms, ranked[0].source, ranked[0].boots) == (200.0, "200.0", 3)
    assert (ranked[0].low_ms, ranked[0].high_ms) == (100.0, 300.0)


# --- built logs ----------------------------------------------------------------------------

@pytest.fixture
def nand(tmp_path: Path) -> dict[str, Recommendation]:
    return advice_for(nand_jffs2_log(tmp_path / "nand.jsonl"))


@pytest.fixture
def ubi(tmp_path: Path) -> dict[str, Recommendation]:
    return advice_for(ubi_log(tmp_path / "ubi.jsonl"))


def test_nand_bootdelay_is_the_one_second_countdown(nand: dict[str, Recommendation]) -> None:
    assert nand["bootdelay"].predicted_ms == pytest.approx(1002, abs=0.5)


def test_nand_progress_hashes_cost_their_bytes_at_the_baud_rate(
        nand: dict[str, Recommendation]) -> None:
    rec = nand["progress"]
    size = HASHES * 66
    assert rec.predicted_ms == pytest.approx(size * 10 / 115.2)
    # The seed figure: silencing them cut this 1.2 MB load from 1.204 s to 0.832 s.
    assert rec.predicted_ms == pytest.approx((1.204 - 0.832) * 1000, rel=0.05)
    assert "1.204 s to 0.832 s" in rec.detail and rec.setting is None
    assert [n for n, _ in rec.evidence][-1] == 12 + HASHES  # " 4194304 bytes read: OK"
    # The bootloader's other output is counted apart from the hashes.
    assert nand["bootloader_console"].predicted_ms < 100


def test_nand_read_larger_than_image(nand: dict[str, Recommendation]) -> None:
    rec = nand["read_trim"]
    read, trimmed = 0x400000, trimmed_read_size(1246156)
    assert trimmed == 0x131000
    assert rec.predicted_ms == pytest.approx(1204 * (read - trimmed) / read, rel=1e-3)
    assert rec.setting == "read_trim" and "0x131000" in rec.detail
    texts = [t for _, t in rec.evidence]
    assert texts[0].startswith("NAND read: device 0") and "Data Size" in texts[-1]


def test_nand_decompression_from_the_done_bytes(nand: dict[str, Recommendation]) -> None:
    rec = nand["decompression"]
    assert rec.predicted_ms == pytest.approx(550, abs=0.5)
    assert "LZ4" in rec.detail and "LZO" in rec.detail and "uncompressed" in rec.detail
    assert rec.evidence[0][1] == "Uncompressing Linux... done, booting the kernel."


def test_nand_lpj_from_printk_times(nand: dict[str, Recommendation]) -> None:
    rec = nand["lpj"]
    assert rec.predicted_ms == pytest.approx(240, abs=0.01)
    assert rec.setting == "lpj" and "lpj=1757184" in rec.detail


def test_nand_checksum_verification(nand: dict[str, Recommendation]) -> None:
    rec = nand["verify"]
    assert rec.predicted_ms == pytest.approx(75, abs=0.5)
    assert rec.evidence == [(19 + HASHES, "   Verifying Checksum ... OK")]


def test_nand_jffs2_without_summary(nand: dict[str, Recommendation]) -> None:
    rec = nand["jffs2_summary"]
    without, with_summary = JFFS2_SEED
    assert rec.predicted_ms == pytest.approx(14000 * (1 - with_summary / without), rel=1e-4)
    assert "without CONFIG_JFFS2_SUMMARY" in rec.detail and "sumtool" in rec.detail
    texts = [t for _, t in rec.evidence]
    assert "jffs2: version 2.2. (NAND)" in texts[0]
    assert "No soundcards found" in texts[1] and "VFS: Mounted root (jffs2" in texts[2]
    assert next(iter(nand)) == "jffs2_summary"  # the largest saving ranks first


def test_nand_slow_initcalls(nand: dict[str, Recommendation]) -> None:
    rec = nand["initcalls"]
    assert rec.predicted_ms == pytest.approx(205.312 + 31)
    assert "The 2 slowest of 4 initcalls take 236 ms" in rec.detail
    assert "atmel_nand_driver_init 205 ms, macb_driver_init 31 ms" in rec.detail
    assert "returned 0 after 205312 usecs" in rec.evidence[0][1]


def test_nand_autonegotiation_before_login(nand: dict[str, Recommendation]) -> None:
    rec = nand["autoneg"]
    assert rec.predicted_ms == pytest.approx(2400, abs=0.01)
    assert "configuring for phy/rgmii" in rec.evidence[0][1]


def test_nand_userland_names_its_slowest_step(nand: dict[str, Recommendation]) -> None:
    rec = nand["userland"]
    assert rec.predicted_ms == pytest.approx(2400, abs=1)
    assert "from init to the login prompt" in rec.detail


def test_ubi_attach_by_scanning_suggests_fastmap(ubi: dict[str, Recommendation]) -> None:
    rec = ubi["ubi_fastmap"]
    pool = 960 // 100 * 5
    assert rec.predicted_ms == pytest.approx(1070 * (1 - (pool + pool // 2) / 960), rel=1e-4)
    assert "CONFIG_MTD_UBI_FASTMAP" in rec.detail and "960 PEBs" in rec.detail
    texts = [t for _, t in rec.evidence]
    assert "attaching mtd2" in texts[0] and "attached mtd2" in texts[1]
    assert "good PEBs: 960" in texts[2]


def test_ubi_rootdelay(ubi: dict[str, Recommendation]) -> None:
    rec = ubi["rootdelay"]
    assert rec.predicted_ms == pytest.approx(2005, abs=0.01)
    assert rec.setting == "no_rootdelay"


def test_ubi_boot_skips_what_does_not_apply(ubi: dict[str, Recommendation]) -> None:
    assert not {"lpj", "verify", "jffs2_summary", "progress", "read_trim"} & set(ubi)


def test_fastmap_attach_is_not_flagged(tmp_path: Path) -> None:
    chunks = uboot(0.0, (0.11, "Starting kernel ..."))
    chunks += kernel(1.0, (1.5, "ubi0: attaching mtd2"), (1.58, "ubi0: attached by fastmap"),
                     (1.6, 'ubi0: attached mtd2 (name "rootfs", size 120 MiB)'))
    assert "ubi_fastmap" not in advice_for(write_session(tmp_path / "fm.jsonl", chunks))


def test_fit_image_read_is_never_trimmed() -> None:
    assert "read_trim" not in advice_for(DEFAULT[0])


# --- predictions against A/B runs ----------------------------------------------------------

def ab_copy(src: Path, folder: Path, variant: str, spec: str, run: str = "run1") -> Path:
    """A bundled session as if `bootlab ab` had recorded it as `variant`."""
    folder.mkdir(exist_ok=True)
    path = folder / f"{variant}-{src.name}"
    shutil.copy(src, path)
    with path.open("a") as handle:
        meta = {"label": variant, "ab": {"name": run, "variant": variant, "run": 1,
                                         "seed": 1, "spec": spec}}
        handle.write(json.dumps({"t": 0, "meta": meta}) + "\n")
    return path


@pytest.fixture
def ab_sessions(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "ab"
    return ([ab_copy(p, folder, "base", "") for p in DEFAULT]
            + [ab_copy(p, folder, "quiet", "quiet") for p in QUIET]
            + [ab_copy(p, folder, "nodelay", "bootdelay=0") for p in FAST])


def test_check_predictions_puts_the_measured_difference_beside(ab_sessions: list[Path]) -> None:
    source, analysis = load(DEFAULT[0])
    recs = advise(source, analysis)
    boots = []
    for path in ab_sessions:
        ab_source, ab_analysis = load(path)
        boots += ab_boots(ab_source.meta, ab_analysis)
    outcomes = {o.recommendation.id: o for o in check_predictions(recs, boots,
                                                                  analysis.profile.order)}
    assert set(outcomes) == {"bootdelay", "console"}
    delay = outcomes["bootdelay"]
    assert (delay.variant, delay.milestone) == ("nodelay", "login")
    assert delay.difference is not None and delay.difference.n_a == 2
    assert delay.measured_ms == pytest.approx(2083, abs=15)  # cf. test_compare_stats
    assert delay.measured_ms == pytest.approx(delay.recommendation.predicted_ms, rel=0.1)
    console = outcomes["console"]
    assert console.variant == "quiet" and console.measured_ms is not None
    # QEMU's UART is infinitely fast: quiet saves far less than 115200 baud would.
    assert console.measured_ms < console.recommendation.predicted_ms / 2
    assert console.text().startswith("quiet: ")


def test_ab_boots_ignores_sessions_not_recorded_by_ab() -> None:
    source, analysis = load(DEFAULT[0])
    assert ab_boots(source.meta, analysis) == []


# --- the command line ----------------------------------------------------------------------

def test_advise_prints_ranked_with_evidence_and_ab_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("advise", *map(str, DEFAULT)) == 0
    out = capsys.readouterr().out
    assert "console-enable burst lines 78-188" in out
    assert "Starting kernel → printk 0:" in out
    first = out.split("\n\n")[1]
    assert first.startswith("1. Autoboot countdown: ") and "(median of 2 boots" in first
    assert ":13  Hit any key to stop autoboot" in first
    assert "check: bootlab ab socket://127.0.0.1:" in first and first.endswith("--persist")
    assert "2. Kernel console output" in out and "[quiet]" in out


def test_advise_json_with_ab_results(capsys: pytest.CaptureFixture[str],
                                     ab_sessions: list[Path]) -> None:
    assert cli("advise", str(DEFAULT[0]), "--json", "--ab", *map(str, ab_sessions)) == 0
    data = json.loads(capsys.readouterr().out)
    recs = {r["id"]: r for r in data["recommendations"]}
    console = recs["console"]
    assert console["evidence"][0] == {"line": 76, "text": "Starting kernel ..."}
    assert console["ab_command"].endswith("--variant base: --variant quiet --boots 5")
    measured = console["measured"][0]
    assert measured["variant"] == "quiet" and measured["milestone"] == "login"
    assert measured["low_ms"] <= measured["measured_ms"] <= measured["high_ms"]
    assert recs["userland"]["ab_command"] is None and recs["userland"]["measured"] == []


def test_advise_reads_an_ab_state_file(capsys: pytest.CaptureFixture[str],
                                       ab_sessions: list[Path]) -> None:
    from bootlab.core.board.abplan import ABState, make_plan

    folder = ab_sessions[0].parent
    state = ABState(folder / "ab-run1.json", "run1", 1, 2,
                    {"base": "", "quiet": "quiet", "nodelay": "bootdelay=0"},
                    make_plan(["base", "quiet", "nodelay"], 2, 1))
    for path in ab_sessions:
        variant = path.name.split("-")[0]
        state.done[(variant, 1 if (variant, 1) not in state.done else 2)] = path.name
    state.save()
    assert cli("advise", str(DEFAULT[0]), "--ab", str(state.path)) == 0
    out = capsys.readouterr().out
    assert "A/B run1: nodelay: -2" in out and "measured 20" in out


def test_advise_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("advise", str(tmp_path / "missing.jsonl")) == 2
    assert "no such file" in capsys.readouterr().err


def test_dmesg_gets_the_kernel_side_advice_only(tmp_path: Path) -> None:
    path = tmp_path / "dmesg.txt"
    path.write_text("[    0.000000] Booting Linux on physical CPU 0x0\n"
                    "[    0.002000] Calibrating delay loop... 351.43 BogoMIPS (lpj=1757184)\n"
                    "[    0.242000] pid_max: default: 32768 minimum: 301\n"
                    "[    0.310000] calling  atmel_nand_driver_init+0x0/0x18 @ 1\n"
                    "[    0.520300] initcall atmel_nand_driver_init+0x0/0x18 returned 0 after "
                    "210300 usecs\n"
                    "[    1.200000] Run /sbin/init as init process\n")
    recs = advice_for(path)
    assert set(recs) == {"lpj", "initcalls"}
    assert recs["lpj"].predicted_ms == pytest.approx(240)
    assert recs["initcalls"].predicted_ms == pytest.approx(210.3)


def test_advise_shows_the_buffered_prediction_beside_the_upper_bound(
        capsys: pytest.CaptureFixture[str]) -> None:
    source, analysis = load(PACED)
    bound = kernel_message_bytes(source, analysis) * MS_PER_BYTE
    pipe = by_id(advise(source, analysis, Uart(4096, "empty")))["console"].predicted_ms
    assert cli("advise", str(PACED), "--uart-fifo", "4096", "--uart-refill", "empty") == 0
    block = next(b for b in capsys.readouterr().out.split("\n\n") if "Kernel console" in b)
    assert f"Kernel console output: {pipe:.0f} ms (upper bound {bound:.0f} ms)" in block
    assert "a 4096-byte transmit buffer, refilled only once empty" in block
    assert cli("advise", str(PACED), "--json") == 0
    recs = {r["id"]: r for r in json.loads(capsys.readouterr().out)["recommendations"]}
    assert recs["console"]["bound_ms"] == pytest.approx(bound, abs=0.05)
    assert recs["console"]["predicted_ms"] == recs["console"]["bound_ms"]


def test_advise_refuses_a_negative_fifo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli("advise", str(PACED), "--uart-fifo", "-1")
    assert "not a byte count" in capsys.readouterr().err


def test_the_pipe_waits_are_the_jumps_in_the_paced_boots_printk_times() -> None:
    """Behind uart-proxy.py the kernel stalls twice: when the console is enabled (a full page
    must drain: 4096 bytes, 356 ms) and when the next page fills. Both show as jumps in the
    printk times, which also hold the ~40 ms of work the unthrottled boots do there."""
    source, analysis = load(PACED)
    pipe = by_id(advise(source, analysis, Uart(4096, "empty")))["console"].predicted_ms
    stamped = [(float(m.group(1)), m.group(2)) for m in
               re.finditer(rb"\[\s*(\d+\.\d+)\] ([^\r\n]*)", source.data)]
    enabled = next(i for i, (_, text) in enumerate(stamped) if b"console [ttyAMA0]" in text)
    gaps = [(b[0] - a[0]) * 1000 for a, b in pairwise(stamped)]
    jumps = gaps[enabled - 1] + max(gaps[enabled:enabled + 25])
    assert gaps[enabled - 1] > 4096 * MS_PER_BYTE
    assert 0 <= jumps - pipe <= 80
