"""A boot's dmesg, collected after its goal (`--collect`), joined to its console table: the
kernel milestones a quiet console did not show come from dmesg, marked so, placed on the
session's clock by the sync line (or the console's own printk times); one that cannot be
placed adds nothing and says why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bootlab.core.analysis.loading import load
from bootlab.core.capture.session import SessionWriter

CONSOLE = [  # a quiet boot: U-Boot, then nothing from the kernel, then user space
    (0.000, b"U-Boot 2023.01+dfsg-2 (Jan 01 2023 - 00:00:00 +0000)\r\n"),
    (0.400, b"Hit any key to stop autoboot:  0 \r\n"),
    (0.900, b"## Booting kernel from Legacy Image at 40400000 ...\r\n"),
    (1.300, b"Starting kernel ...\r\n\r\n"),
    (3.200, b"[rcS] starting system\r\n"),
    (3.500, b"\r\nboard login: "),
    (4.000, b"root\r\n# "),
]
DMESG = "\n".join([
    "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]",
    "[    0.012000] Calibrating delay loop (skipped), value calculated using timer "
    "frequency.. 125.00 BogoMIPS (lpj=250000)",
    "[    0.950000] VFS: Mounted root (ext4 filesystem) readonly on device 254:2.",
    "[    0.960000] Freeing unused kernel memory: 6528K",
    "[    0.961000] Run /sbin/init as init process",
    "[    4.500000] bootlab sync 0a1b2c3d",
]) + "\n"


def session(folder: Path, sync_on_console: bool = True, dmesg: str = DMESG,
            printk_on_console: bool = False, sync_printk: str = "4.500000") -> Path:
    path = folder / "quiet.jsonl"
    writer = SessionWriter(path, {"label": "quiet", "profile": "linux"}, start_ns=0)
    for t_s, data in CONSOLE:
        writer.rx(data, int(t_s * 1e9))
        if printk_on_console and t_s == 1.300:
            writer.rx(b"[    0.000000] Booting Linux on physical CPU 0x0\r\n", int(1.6e9))
            writer.rx(b"[    0.500000] random: crng init done\r\n", int(2.1e9))
    writer.tx(b"printf '<3>bootlab sync %s\\n' 0a1b2c3d > /dev/kmsg\n", int(4.1e9))
    writer.rx(b"printf '<3>bootlab sync %s\\n' 0a1b2c3d > /dev/kmsg\r\n", int(4.2e9))
    if sync_on_console:
        writer.rx(f"[    {sync_printk}] bootlab sync 0a1b2c3d\r\n".encode(), int(5.8e9))
    writer.rx(b"# ", int(5.9e9))
    writer.event("collected", int(6.5e9), source="dmesg", command="dmesg", sync="0a1b2c3d",
                 text=dmesg)
    writer.close(int(7e9))
    return path


def rows(path: Path) -> dict[str, dict[str, object]]:
    out = subprocess.run([sys.executable, "-m", "bootlab", "analyze", str(path), "--json"],
                         capture_output=True, text=True, check=True)
    return {m["id"]: m for m in json.loads(out.stdout)["milestones"]}


def test_a_quiet_boot_shows_its_kernel_milestones_from_dmesg(tmp_path: Path) -> None:
    path = session(tmp_path)
    boot = load(path).analysis.boots[-1]
    by_id = {m.id: m for m in boot.milestones}
    # the sync line: console 5.8 s, printk 4.5 s -> printk time zero at 1.3 s host
    assert by_id["linux"].source == "dmesg" and by_id["linux"].host_s == pytest.approx(1.3)
    assert by_id["init"].host_s == pytest.approx(1.3 + 0.961)
    assert by_id["starting_kernel"].source == "console"
    assert by_id["login"].source == "console"
    times = [m.host_s for m in boot.milestones]
    assert times == sorted(times)                    # one table, in time order
    assert boot.collected is not None and "the sync line" in boot.collected
    assert "not checked: the console showed no kernel line" in boot.collected
    # the command line says where each row comes from
    shown = subprocess.run([sys.executable, "-m", "bootlab", "analyze", str(path)],
                           capture_output=True, text=True, check=True).stdout
    assert "init (dmesg)" in shown and "dmesg:5" in shown
    assert "placed by the sync line" in shown
    assert rows(path)["calibrate"]["source"] == "dmesg"


def test_without_the_sync_line_the_console_printk_times_place_it(tmp_path: Path) -> None:
    path = session(tmp_path, sync_on_console=False, printk_on_console=True)
    boot = load(path).analysis.boots[-1]
    by_id = {m.id: m for m in boot.milestones}
    assert by_id["linux"].source == "console"        # the console showed that line itself
    assert by_id["init"].source == "dmesg"
    assert by_id["init"].host_s == pytest.approx(1.6 + 0.961, abs=0.01)
    assert boot.collected is not None and "printk times" in boot.collected


def test_a_dmesg_that_cannot_be_placed_adds_nothing_and_says_why(tmp_path: Path) -> None:
    path = session(tmp_path, sync_on_console=False)
    boot = load(path).analysis.boots[-1]
    assert all(m.source == "console" for m in boot.milestones)
    assert boot.collected is not None and "cannot be placed" in boot.collected
    assert "loglevel" in boot.collected
    (tmp_path / "untimed").mkdir()
    untimed = session(tmp_path / "untimed", dmesg="\n".join(
        line.split("] ", 1)[1] for line in DMESG.splitlines()))
    boot = load(untimed).analysis.boots[-1]
    assert all(m.source == "console" for m in boot.milestones)
    assert boot.collected is not None and "no printk times" in boot.collected


def test_the_kernel_lines_the_console_showed_check_the_sync_placement(tmp_path: Path) -> None:
    path = session(tmp_path, printk_on_console=True)
    boot = load(path).analysis.boots[-1]
    assert boot.collected is not None and "placed by the sync line" in boot.collected
    # printk 0.0 and 0.5 placed at 1.3 and 1.8 s; the console showed them at 1.6 and 2.1 s
    assert "checked on the 2 kernel lines the console showed: they came +300.0 to +300.0 ms " \
        "after the times dmesg gives them" in boot.collected
    assert {m.id: m.source for m in boot.milestones}["init"] == "dmesg"


def test_a_board_clock_that_lags_the_host_is_not_joined(tmp_path: Path) -> None:
    """An emulator's printk clock ran slow: the console shows kernel lines before the times
    the sync line gives them. Joining would misplace every dmesg milestone: refused, said."""
    path = session(tmp_path, printk_on_console=True, sync_printk="3.000000",
                   dmesg=DMESG.replace("4.500000", "3.000000"))
    boot = load(path).analysis.boots[-1]
    assert all(m.source == "console" for m in boot.milestones)
    assert boot.collected is not None and "dmesg was collected but not joined" in boot.collected
    assert "2 kernel lines reached the console up to 1.200 s before" in boot.collected
    assert "it ran at about 0.68x the host's pace" in boot.collected
