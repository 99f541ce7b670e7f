"""A boot's dmesg, collected after its goal (`--collect`), joined to its console table: the
kernel milestones a quiet console did not show come from dmesg, marked so, placed on the
session's clock by the moments the console and dmesg both saw, within the bounds they give;
what they cannot pin stays on the board's own clock; a dmesg that contradicts the console adds
nothing. Each case is said."""

from __future__ import annotations

import json
import re
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


SYNCS = (("0a1b2c3d", 4.5, 5.8), ("5e6f7a8b", 7.0, 8.3))
"""The two sync lines: nonce, printk time, console arrival (a clock that keeps time: printk
time zero at 1.3 s host)."""


def session(folder: Path, sync_on_console: bool = True, dmesg: str = DMESG,
            printk_on_console: bool = False,
            syncs: tuple[tuple[str, float, float], ...] = SYNCS,
            console_printk: tuple[tuple[float, float], ...] = ((0.3, 1.6), (0.8, 2.1))) -> Path:
    """A quiet boot's session with its dmesg collected: the sync lines written, shown on the
    console (or not), dmesg with their printk times; `console_printk` the (printk, arrival)
    of kernel lines the console showed on an idle link, when `printk_on_console`."""
    path = folder / "quiet.jsonl"
    writer = SessionWriter(path, {"label": "quiet", "profile": "linux"}, start_ns=0)
    for t_s, data in CONSOLE:
        writer.rx(data, int(t_s * 1e9))
        if printk_on_console and t_s == 1.300:
            for kernel_s, host_s in console_printk:
                writer.rx(f"[{kernel_s:12.6f}] random: crng init done\r\n".encode(),
                          int(host_s * 1e9))
    dmesg = dmesg.rstrip("\n").rsplit("\n", 1)[0] + "\n"  # its own sync lines, below
    logged: list[str] = []
    for nonce, kernel_s, host_s in syncs:
        command = f"printf '<3>bootlab sync %s\\n' {nonce} > /dev/kmsg"
        writer.tx(command.encode() + b"\n", int((host_s - 1.7) * 1e9))
        writer.rx(command.encode() + b"\r\n", int((host_s - 1.6) * 1e9))
        if sync_on_console:
            writer.rx(f"[{kernel_s:12.6f}] bootlab sync {nonce}\r\n".encode(), int(host_s * 1e9))
        writer.rx(b"# ", int((host_s + 0.1) * 1e9))
        stamp = f"[{kernel_s:12.6f}] " if dmesg.startswith("[") else ""
        logged.append(f"{stamp}bootlab sync {nonce}")
    # dmesg is read between the two: the second's line is read from the kernel's log after
    fields = {key: nonce for key, (nonce, _, _) in zip(("sync", "sync_end"), syncs,
                                                       strict=False)}
    if len(logged) > 1:
        fields["sync_end_line"] = logged[1]
    writer.event("collected", int(9e9), source="dmesg", command="dmesg", **fields,
                 text=dmesg + logged[0] + "\n")
    writer.close(int(10e9))
    return path


def rows(path: Path) -> dict[str, dict[str, object]]:
    out = subprocess.run([sys.executable, "-m", "bootlab", "analyze", str(path), "--json"],
                         capture_output=True, text=True, check=True)
    return {m["id"]: m for m in json.loads(out.stdout)["milestones"]}


def shown(path: Path) -> str:
    return subprocess.run([sys.executable, "-m", "bootlab", "analyze", str(path)],
                          capture_output=True, text=True, check=True).stdout


def test_a_quiet_boot_shows_its_kernel_milestones_from_dmesg(tmp_path: Path) -> None:
    path = session(tmp_path)
    boot = load(path).analysis.boots[-1]
    by_id = {m.id: m for m in boot.milestones}
    # the sync lines: console 5.8 s, printk 4.5 s -> printk time zero at 1.3 s host
    assert by_id["linux"].source == "dmesg" and by_id["linux"].host_s == pytest.approx(1.3,
                                                                                    abs=0.005)
    assert by_id["init"].host_s == pytest.approx(1.3 + 0.961, abs=0.005)
    # the bound: the sync line's read granularity, and 200 ppm over the 3.5 s back to init
    assert by_id["init"].uncertainty_ms is not None and 0.7 < by_id["init"].uncertainty_ms < 5
    assert by_id["starting_kernel"].source == "console"
    assert by_id["login"].source == "console"
    times = [m.host_s for m in boot.milestones]
    assert times == sorted(times)                    # one table, in time order
    assert boot.collected is not None
    assert "it kept the host's time within 200 ppm on 2 anchors over 2.5 s" in boot.collected
    # the command line says where each row comes from, and how well it is placed
    text = shown(path)
    assert "init (dmesg ±" in text and "dmesg:5" in text
    assert "moments the console and dmesg both saw" in text
    assert rows(path)["calibrate"]["source"] == "dmesg"
    assert isinstance(rows(path)["calibrate"]["uncertainty_ms"], float)


def test_one_sync_line_cannot_show_the_clock_keeps_time(tmp_path: Path) -> None:
    """One moment both clocks saw gives the offset but not the pace: nothing earlier is
    bounded from below. The milestones stay on the board's own clock, listed apart."""
    path = session(tmp_path, syncs=SYNCS[:1])
    boot = load(path).analysis.boots[-1]
    assert all(m.source == "console" for m in boot.milestones)
    assert {m.id for m in boot.apart} >= {"linux", "calibrate", "init"}
    assert boot.collected is not None and "too few anchors" in boot.collected
    text = shown(path)
    assert "on the board's own clock only" in text
    assert "0.961000" in text


def test_the_console_lines_on_an_idle_link_place_what_lies_between_them(
        tmp_path: Path) -> None:
    """Without the sync lines, kernel lines the console showed after an idle link are moments
    both clocks saw: a milestone between two of them is placed, one beyond them is not."""
    path = session(tmp_path, sync_on_console=False, printk_on_console=True,
                   console_printk=((0.0, 1.6), (0.5, 2.1)),
                   dmesg=DMESG.replace("[    0.012000] Calibrating", "[    0.200000] Calibrating"))
    boot = load(path).analysis.boots[-1]
    by_id = {m.id: m for m in boot.milestones}
    assert by_id["calibrate"].source == "dmesg"
    assert by_id["calibrate"].host_s == pytest.approx(1.8, abs=0.005)
    assert by_id["init"].source == "console" and by_id["init"].fallback  # the console's stays
    assert "init" in {m.id for m in boot.apart}


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


def test_the_kernel_lines_the_console_showed_are_anchors_too(tmp_path: Path) -> None:
    path = session(tmp_path, printk_on_console=True)
    boot = load(path).analysis.boots[-1]
    assert boot.collected is not None
    assert "within 200 ppm on 4 anchors over 6.7 s" in boot.collected
    assert {m.id: m.source for m in boot.milestones}["init"] == "dmesg"


def test_a_board_clock_that_loses_time_is_only_bracketed(tmp_path: Path) -> None:
    """An emulator's tick-counted clock lost time: 2.0 printk seconds between the sync lines
    took 2.5 host seconds. What lies between the kernel lines the console showed is placed;
    init, 3.7 host seconds from the nearest later anchor, is not: it stays apart."""
    path = session(tmp_path, printk_on_console=True, syncs=(("0a1b2c3d", 3.0, 5.8),
                                                           ("5e6f7a8b", 5.0, 8.3)),
                   console_printk=((0.0, 1.6), (0.5, 2.1)),
                   dmesg=DMESG.replace("[    0.012000] Calibrating", "[    0.200000] Calibrating"))
    boot = load(path).analysis.boots[-1]
    assert boot.collected is not None and "ran at 0.676x the host's pace" in boot.collected
    by_id = {m.id: m for m in boot.milestones}
    assert by_id["calibrate"].host_s == pytest.approx(1.8, abs=0.005)
    assert by_id["init"].source == "console" and by_id["init"].fallback  # the console's stays
    assert "init" in {m.id for m in boot.apart}
    assert "stay on the board's own clock" in boot.collected


def test_a_tick_counted_clock_is_never_taken_to_keep_time(tmp_path: Path) -> None:
    """The kernel said it switched to the jiffies clocksource: two sync lines that agree at
    the end of the boot say nothing of its pace during the boot."""
    dmesg = DMESG.replace("[    0.950000] VFS", "[    0.500000] clocksource: Switched to "
                          "clocksource refined-jiffies\n[    0.950000] VFS")
    boot = load(session(tmp_path, dmesg=dmesg)).analysis.boots[-1]
    assert boot.collected is not None and "counted in timer ticks" in boot.collected
    assert all(m.source == "console" for m in boot.milestones)
    assert {m.id for m in boot.apart} >= {"calibrate", "init"}     # on the board's clock
    # an emulator may deliver late ticks in a burst: the clock then runs fast, so a line the
    # console showed "before its time" contradicts nothing, and nothing is placed
    (tmp_path / "burst").mkdir()
    boot = load(session(tmp_path / "burst", dmesg=dmesg, printk_on_console=True,
                        console_printk=((1.5, 1.3005),),
                        syncs=(("0a1b2c3d", 4.5, 7.0), ("5e6f7a8b", 7.0, 9.5)))
                ).analysis.boots[-1]
    assert boot.collected is not None and "not joined" not in boot.collected
    assert "nothing bounds it" in boot.collected and boot.apart


def test_a_line_the_moments_after_it_show_late_is_set_aside(tmp_path: Path) -> None:
    """Two kernel lines came after an idle link, but the sync lines show the board's clock
    keeps time and put their printk times 300 ms before they arrived: the board sent them
    late (no clock runs fast), so they are not moments, only lines shown after their time."""
    path = session(tmp_path, printk_on_console=True, console_printk=((0.0, 1.6), (0.5, 2.1)))
    boot = load(path).analysis.boots[-1]
    assert boot.collected is not None and "on 2 anchors over 2.5 s" in boot.collected
    assert {m.id: m.source for m in boot.milestones}["init"] == "dmesg"


def test_a_kernel_line_shown_before_dmesg_says_it_was_printed_refuses_the_join(
        tmp_path: Path) -> None:
    """The console showed a kernel line (right behind `Starting kernel`, so not on an idle
    link) 2.7 s before the time the sync lines give its printk time: this dmesg and this
    console cannot both be right. Refused, said."""
    path = session(tmp_path, printk_on_console=True, console_printk=((1.5, 1.3005),),
                   syncs=(("0a1b2c3d", 4.5, 7.0), ("5e6f7a8b", 7.0, 9.5)))
    boot = load(path).analysis.boots[-1]
    assert all(m.source == "console" for m in boot.milestones)
    assert boot.collected is not None and "dmesg was collected but not joined" in boot.collected
    assert re.search(r"1 kernel lines reached the console up to 2\.69\d s before",
                     boot.collected), boot.collected
    # what dmesg holds is still shown, on the board's own clock and said to be there
    assert boot.apart and all(m.host_s is None and m.source == "dmesg" for m in boot.apart)
    assert f"its {len(boot.apart)} milestones the console did not show stay on the board's " \
        "own clock" in boot.collected
