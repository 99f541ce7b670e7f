"""How fast does bootlab analyse a big boot log? Prints figures; asserts nothing.

    .venv/bin/python bench/bench_analyze.py                 # 1,000,000 lines, best of 3
    .venv/bin/python bench/bench_analyze.py --lines 200000 --repeat 5 --keep

It generates a realistic serial capture (U-Boot SPL + U-Boot with the autoboot countdown, a
printk-stamped kernel log with varied driver text, systemd/init lines with ANSI colours, a
login prompt, then a chatty running system with more kernel and daemon messages; CRLF line
endings; the running part is 88 % printk lines of 13 message kinds, 0.4 % milestone-like events,
12 % daemon lines, ~5 % of all lines with ANSI colours or UTF-8) in a temporary folder and
measures, each best of N:

1. in-process `bootlab.core.analysis.pipeline.analyze(data, load_profile("linux"))` on the bytes;
2. the CLI end to end, `bootlab analyze FILE --json` in a subprocess (interpreter start, import,
   read, kind detection, analysis, JSON out);
3. the same content as a session file (written with SessionWriter, one rx record per ~4 KiB
   read, as `bootlab record` would): in-process `open_source` + `analyze` with per-line host
   times, and `bootlab analyze SESSION --json` end to end.

Peak RSS: in-process, VmHWM after resetting it (`/proc/self/clear_refs`), shown next to the
VmRSS before the run (the generated log is already in memory); for the CLI, `ru_maxrss` of the
child, taken through a small launcher process so the forked copy of this (large) process is
not counted. Target: >= 1,000,000 lines/s (issue 15).

4. whole `bootlab analyze LOG --json` commands on the two big captures of issue 15 (target
   <= 2 s each): one real boot (the 032 corpus log, `../shared/corpus`) followed by 1,000,000
   printk-stamped kernel debug lines, and an overnight reboot loop, that log 2,771 times back to
   back (997,560 lines).

The reference, measured in the same run: what the tools bootlab is compared with do (LAVA,
labgrid, tbot, grabserial: the marker strings of `tests/test_corpus.py`'s anchor), a plain
Python loop trying their five regular expressions on every line; in-process on the bytes, and
as a command (`python -c`, interpreter start and reading the file included) on the captures.
It finds far fewer milestones (0.262 of the corpus's, against bootlab's 1.000): it is the
speed of the simplest thing, not a competitor's result.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAIN = Path(__file__).resolve().parent.parent
if str(MAIN) not in sys.path:
    sys.path.insert(0, str(MAIN))

from bootlab.core.analysis.pipeline import Analysis, analyze  # noqa: E402
from bootlab.core.analysis.profiles import load_profile  # noqa: E402
from bootlab.core.capture.exporters import jsonl  # noqa: E402
from bootlab.core.capture.session import SessionWriter  # noqa: E402
from bootlab.core.capture.sources import open_source  # noqa: E402

TARGET_LINES_S = 1_000_000
TARGET_COMMAND_S = 2.0
CORPUS_LOG = MAIN.parent / "shared" / "corpus" / "logs" / \
    "032-pine64plus-a64-spl2017-extlinux-debian9-systemd.log"
LOOP_BOOTS = 2771
# The reference: the anchor markers of tests/test_corpus.py, tried on every line.
REFERENCE_PATTERNS = (r"stop autoboot", r"autoboot:\s{0,5}\d{0,3}", r"Starting kernel",
                      r"Uncompressing Linux[^\n]{0,40}done,", r"Linux version \d", r"login: ")
_REFERENCE = r"""
import re, sys
markers = [re.compile(p) for p in sys.argv[2:]]
found = 0
with open(sys.argv[1], "rb") as handle:
    for line in handle.read().decode("latin-1").split("\n"):
        for marker in markers:
            if marker.search(line):
                found += 1
print(found)
"""


def reference_scan(data: bytes) -> int:
    """The reference in-process: the anchor markers tried on every line; the hits."""
    markers = [re.compile(p) for p in REFERENCE_PATTERNS]
    return sum(1 for line in data.decode("latin-1").split("\n") for marker in markers
               if marker.search(line))


def debug_capture(n_lines: int, seed: int = 3) -> bytes:
    """One real boot (the 032 corpus log) followed by `n_lines` printk-stamped kernel debug
    lines (initcall_debug and dynamic-debug messages of a few drivers)."""
    r = random.Random(seed)
    kinds = ["calling  {f}+0x0/0x{a:x} @ 1",
             "initcall {f}+0x0/0x{a:x} returned 0 after {u} usecs",
             "{d}: {f}: reg 0x{a:08x} = 0x{b:08x}", "usb {u}-1: {f}: urb status -{b}",
             "mmc0: {f}: cmd {u} arg {a:08x} flags 0x{b:x}",
             "dwc2 1c1a000.usb: {f}: ep{u} xfer {a} bytes"]
    funcs = ["sunxi_mmc_request", "dwc2_hsotg_ep_queue", "i2c_mv64xxx_xfer", "regmap_write",
             "clk_set_rate", "axp20x_irq", "spi_sync"]
    devices = ["sun50i-a64-pinctrl 1c20800.pinctrl", "axp20x-rsb sunxi-rsb-3a3",
               "sun4i-drm display-engine"]
    t = 30.0
    out = []
    for _ in range(n_lines):
        t += r.expovariate(1 / 0.0005)
        text = r.choice(kinds).format(f=r.choice(funcs), a=r.getrandbits(20), b=r.getrandbits(16),
                                      u=r.randint(1, 999), d=r.choice(devices))
        out.append(f"[{t:12.6f}] {text}")
    return CORPUS_LOG.read_bytes() + ("\n".join(out) + "\n").encode()


EOL = b"\r\n"

# A launcher that runs argv[1:] and reports wall time and the child's peak RSS. Being a fresh,
# small interpreter, its own pages (which a vfork()ed child shares until exec) do not inflate
# the child's ru_maxrss the way this process's would.
_LAUNCHER = r"""
import json, os, resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
try:
    o = json.loads(p.stdout)
    kind, lines = o["source"].get("kind"), o.get("lines")
    ms = [m["id"] for m in o.get("milestones", [])]
except Exception:
    kind = lines = ms = None
json.dump({"wall_s": wall, "rc": p.returncode, "maxrss_kb": ru.ru_maxrss,
           "cpu_s": ru.ru_utime + ru.ru_stime, "stdout_bytes": len(p.stdout),
           "kind": kind, "lines": lines, "milestones": ms,
           "stderr": p.stderr[-2000:].decode("utf-8", "replace")}, sys.stdout)
"""


# --------------------------------------------------------------------------------------------
# the log
# --------------------------------------------------------------------------------------------
_UBOOT_SPL = [
    "U-Boot SPL 2024.01 (Jan 08 2024 - 10:12:44 +0000)",
    "DRAM: 1024 MiB",
    "Trying to boot from MMC1",
    "NOTICE:  BL31: v2.9(release):v2.9.0-660-g88b2d8134",
    "NOTICE:  BL31: Built : 10:11:03, Jan  8 2024",
    "",
]
_UBOOT = [
    "U-Boot 2024.01 (Jan 08 2024 - 10:12:44 +0000) Allwinner Technology",
    "",
    "CPU:   Allwinner H5 (SUN50I)",
    "Model: FriendlyARM NanoPi NEO 2",
    "DRAM:  1 GiB",
    "Core:  62 devices, 21 uclasses, devicetree: separate",
    "WDT:   Not starting watchdog@1c20ca0",
    "MMC:   mmc@1c0f000: 0, mmc@1c11000: 1",
    "Loading Environment from FAT... Unable to use mmc 0:1...",
    "In:    serial@1c28000",
    "Out:   serial@1c28000",
    "Err:   serial@1c28000",
    "Net:   eth0: ethernet@1c30000",
]
_UBOOT_LOAD = [
    "switch to partitions #0, OK",
    "mmc0 is current device",
    "Scanning mmc 0:1...",
    "Found U-Boot script /boot/boot.scr",
    "3893 bytes read in 3 ms (1.2 MiB/s)",
    "## Executing script at 4fc00000",
    "22511624 bytes read in 1032 ms (20.8 MiB/s)",
    "31879 bytes read in 7 ms (4.3 MiB/s)",
    "## Flattened Device Tree blob at 4fa00000",
    "   Booting using the fdt blob at 0x4fa00000",
    "   Loading Device Tree to 0000000049ff5000, end 0000000049fffc86 ... OK",
    "",
    "Starting kernel ...",
    "",
]
_KERNEL_HEAD = [
    "Booting Linux on physical CPU 0x0000000000 [0x410fd034]",
    "Linux version 6.6.12 (builder@ci) (aarch64-linux-gnu-gcc (GCC) 13.2.0, GNU ld 2.41) "
    "#1 SMP PREEMPT Mon Jan 15 09:31:07 UTC 2024",
    "Machine model: FriendlyARM NanoPi NEO 2",
    "efi: UEFI not found.",
    "Reserved memory: created CMA memory pool at 0x000000007c000000, size 64 MiB",
    "Zone ranges:",
    "  DMA      [mem 0x0000000040000000-0x000000007fffffff]",
    "Kernel command line: console=ttyS0,115200 root=/dev/mmcblk0p2 rootwait rw",
    "Calibrating delay loop (skipped), value calculated using timer frequency.. "
    "48.00 BogoMIPS (lpj=96000)",
]
_DRIVERS = ["usb", "mmc", "eth", "i2c", "spi", "gpio", "rtc", "thermal", "cpufreq", "dma"]
_KERNEL_TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: f"calling  {r.choice(_DRIVERS)}_init+0x0/0x{r.randint(16, 4095):x} @ 1",
    lambda r: f"initcall {r.choice(_DRIVERS)}_init+0x0/0x{r.randint(16, 4095):x} returned 0 "
              f"after {r.randint(0, 99999)} usecs",
    lambda r: f"usb {r.randint(1, 4)}-{r.randint(1, 4)}: new high-speed USB device number "
              f"{r.randint(2, 127)} using ehci-platform",
    lambda r: f"usb {r.randint(1, 4)}-1: New USB device found, "
              f"idVendor={r.randint(0, 65535):04x}, idProduct={r.randint(0, 65535):04x}, "
              f"bcdDevice= {r.randint(0, 9)}.{r.randint(0, 99):02d}",
    lambda r: f"mmc{r.randint(0, 2)}: new high speed SDHC card at address "
              f"{r.randint(0, 65535):04x}",
    lambda r: f"audit: type=1400 audit({r.randint(1700000000, 1800000000)}."
              f"{r.randint(0, 999):03d}:{r.randint(1, 999)}): apparmor=\"STATUS\" "
              f"operation=\"profile_load\" profile=\"unconfined\" "
              f"name=\"/usr/bin/app{r.randint(0, 99)}\" pid={r.randint(100, 32000)}",
    lambda r: f"random: crng reseeded on system resumption (entropy {r.randint(0, 256)})",
    lambda r: f"sunxi-mmc 1c0f000.mmc: data error, sending stop command "
              f"(blk {r.randint(0, 1 << 24)})",
    lambda r: f"cpu cpu{r.randint(0, 3)}: dev_pm_opp_set_rate: failed to find OPP for freq "
              f"{r.randint(100, 1500) * 1000000} (-34)",
    lambda r: f"thermal thermal_zone{r.randint(0, 2)}: temperature {r.randint(30000, 90000)} "
              "over trip point 1",
    lambda r: f"br0: port {r.randint(1, 4)}(eth{r.randint(0, 3)}) entered forwarding state",
    lambda r: f"[UFW BLOCK] IN=eth0 OUT= MAC={r.getrandbits(48):012x} "
              f"SRC=192.168.{r.randint(0, 255)}.{r.randint(1, 254)} "
              f"DST=192.168.1.{r.randint(1, 254)} LEN={r.randint(40, 1500)} "
              f"TOS=0x00 PROTO=UDP SPT={r.randint(1024, 65535)} DPT={r.randint(1, 1024)}",
    lambda r: f"Out of memory: Killed process {r.randint(100, 32000)} (worker) "
              f"total-vm:{r.randint(1000, 900000)}kB, anon-rss:{r.randint(100, 90000)}kB",
]
# messages that also hit a milestone pattern (mounts, links coming up): rare events at runtime
_RARE_TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: f"EXT4-fs (mmcblk0p{r.randint(1, 4)}): mounted filesystem "
              f"{r.getrandbits(32):08x}-{r.getrandbits(16):04x} r/w with ordered data mode.",
    lambda r: f"dwmac-sun8i 1c30000.ethernet eth0: Link is Up - {r.choice(['100', '1000'])}Mbps/"
              "Full - flow control rx/tx",
    lambda r: f"IPv6: ADDRCONF(NETDEV_CHANGE): wlan{r.randint(0, 1)}: link becomes ready",
]
# before the root file system is mounted: no OOM or firewall messages yet
_EARLY_TEMPLATES = _KERNEL_TEMPLATES[:-2]
_KERNEL_MILESTONES = [
    "Waiting for root device /dev/mmcblk0p2...",
    "EXT4-fs (mmcblk0p2): mounted filesystem with ordered data mode. Quota mode: disabled.",
    "VFS: Mounted root (ext4 filesystem) on device 179:2.",
    "devtmpfs: mounted",
    "Freeing unused kernel memory: 2432K",
    "Run /sbin/init as init process",
]
_SERVICES = ["Journal Service", "Network Manager", "OpenSSH Daemon", "Login Service",
             "Time Synchronization", "udev Kernel Device Manager", "D-Bus System Message Bus"]
_USER_TEMPLATES: list[Callable[[random.Random], bytes]] = [
    lambda r: b"[\x1b[0;32m  OK  \x1b[0m] Started \x1b[0;1;39m"
              + r.choice(_SERVICES).encode() + b"\x1b[0m.",
    lambda r: b"         Starting " + r.choice(_SERVICES).encode() + b"...",
    lambda r: f"sshd[{r.randint(300, 32000)}]: Accepted publickey for root from 192.168.1."
              f"{r.randint(2, 254)} port {r.randint(1024, 65535)} ssh2".encode(),
    lambda r: f"app[{r.randint(300, 32000)}]: sensor {r.randint(0, 7)}: "
              f"{r.uniform(-20, 80):.2f} °C".encode(),
    lambda r: f"crond[{r.randint(300, 32000)}]: USER root pid {r.randint(300, 32000)} cmd "
              "run-parts /etc/cron.hourly".encode(),
]


def _stamp(t: float) -> str:
    return f"[{t:12.6f}] "


def make_log(n_lines: int, seed: int = 7) -> bytes:
    """A CRLF serial capture of exactly `n_lines` lines (the last one an unterminated prompt)."""
    r = random.Random(seed)
    out: list[bytes] = []
    add = out.append
    for s in _UBOOT_SPL + _UBOOT:
        add(s.encode())
    add(b"Hit any key to stop autoboot:  2 \b\b\b 1 \b\b\b 0 ")
    for s in _UBOOT_LOAD:
        add(s.encode())
    t = 0.0
    for s in _KERNEL_HEAD:
        add((_stamp(t) + s).encode())
        t += r.uniform(0.0, 0.002)
    # the boot itself: ~2,000 kernel lines, the milestones, init, login
    for i in range(2000):
        add((_stamp(t) + r.choice(_EARLY_TEMPLATES)(r)).encode())
        t += r.expovariate(1 / 0.001)
        if i % 400 == 399:
            add((_stamp(t) + _KERNEL_MILESTONES[i // 400]).encode())
    add((_stamp(t) + _KERNEL_MILESTONES[-1]).encode())
    for _ in range(60):
        add(r.choice(_USER_TEMPLATES)(r))
    add(b"")
    add(b"Welcome to Buildroot")
    add(b"buildroot login: root")
    add(b"# dmesg -w &")
    # the running system: 88 % kernel lines (0.4 % of them events that look like milestones),
    # 12 % daemon output (unstamped; two in five with ANSI colours or UTF-8)
    budget = n_lines - len(out) - 1
    for _ in range(budget):
        t += r.expovariate(1 / 0.005)
        x = r.random()
        if x < 0.004:
            add((_stamp(t) + r.choice(_RARE_TEMPLATES)(r)).encode())
        elif x < 0.88:
            add((_stamp(t) + r.choice(_KERNEL_TEMPLATES)(r)).encode())
        else:
            add(r.choice(_USER_TEMPLATES)(r))
    data = EOL.join(out) + EOL + b"buildroot login: "
    return data


# --------------------------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------------------------
def _status_kb(field: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, float, int, int, Any]:
    """Best wall and CPU seconds of `repeat` runs, VmRSS before, peak VmHWM during (kB)."""
    best_wall = best_cpu = float("inf")
    rss_before = peak = 0
    result: Any = None
    for _ in range(repeat):
        result = None
        gc.collect()
        rss_before = _status_kb("VmRSS")
        reset = _reset_hwm()
        c0, t0 = time.process_time(), time.perf_counter()
        result = run()
        t1, c1 = time.perf_counter(), time.process_time()
        if reset:
            peak = max(peak, _status_kb("VmHWM"))
        best_wall, best_cpu = min(best_wall, t1 - t0), min(best_cpu, c1 - c0)
    return best_wall, best_cpu, rss_before, peak, result


def cli(argv: list[str], repeat: int) -> dict[str, Any]:
    """Best-of-`repeat` end-to-end run of a command, through the launcher."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", _LAUNCHER, *argv],
                              capture_output=True, check=True)
        runs.append(json.loads(done.stdout))
    best = min(runs, key=lambda o: o["wall_s"])
    best["maxrss_kb"] = max(o["maxrss_kb"] for o in runs)
    return best


def bootlab_cmd() -> list[str]:
    """The command, its modules compiled to bytecode first, as an installed package has them
    (pip compiles at install; a checkout run with PYTHONDONTWRITEBYTECODE=1, as on the bench
    VM, would otherwise compile ~100 modules, 0.1 s, at every start)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(MAIN / "bootlab")],
                   check=False, capture_output=True, env={**os.environ,
                                                          "PYTHONDONTWRITEBYTECODE": ""})
    exe = MAIN / ".venv" / "bin" / "bootlab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "bootlab"]


def write_session(path: Path, data: bytes, chunk: int = 4096, baud: int = 115200) -> int:
    """Store `data` as a session, one rx record per `chunk` bytes, times as on a `baud` wire."""
    start_ns = time.monotonic_ns()
    writer = SessionWriter(path, {"label": "bench", "board": "synthetic", "port": "/dev/null",
                                  "baud": baud, "profile": "linux", "settings": {}}, start_ns)
    ns_per_byte = 10 * 1_000_000_000 // baud
    records = 0
    for offset in range(0, len(data), chunk):
        writer.rx(data[offset:offset + chunk], offset * ns_per_byte)
        records += 1
        if records % 256 == 0:
            writer.flush()
    writer.close(t_ns=len(data) * ns_per_byte)
    return records


def slow_path_share(data: bytes, profile: Any) -> float | None:
    """Share of lines the marker prefilter lets through to full matching (None: API changed)."""
    try:
        from bootlab.core.analysis.pipeline import MarkerSet

        markers = MarkerSet(profile)
        starts = markers.prefilter.candidate_starts(data.decode("latin-1"), data, bulk=True)
        return len(starts) / max(1, data.count(b"\n"))
    except (ImportError, AttributeError, TypeError):
        return None


def _summary(analysis: Analysis) -> str:
    ids = [m.id for m in analysis.milestones]
    return f"{len(analysis.boots)} boot(s), {len(ids)} milestones: {', '.join(ids)}"


def _row(what: str, lines: int, size: int, wall: float, cpu: float | None, rss_mb: str) -> str:
    lps = lines / wall
    flag = "ok" if lps >= TARGET_LINES_S else "BELOW target"
    cpu_s = "-" if cpu is None else f"{cpu:.2f}"
    return (f"{what:<44} {wall:8.3f} {cpu_s:>7} {lps:>12,.0f} {size / wall / 1e6:8.1f} "
            f"{rss_mb:>16}  {flag}")


def captures(tmp: Path, repeat: int, figures: dict[str, Any]) -> None:
    """Section 4: whole commands on the two big captures, beside the reference command."""
    print(f"\n{'bootlab analyze CAPTURE --json':<34} {'wall s':>8} {'target':>7} {'ref s':>8} "
          f"{'ratio':>6} {'lines/s':>12} {'RSS MB':>7}  milestones")
    corpus = CORPUS_LOG.read_bytes()
    for key, name, data in (("debug", "boot + 1M debug lines", debug_capture(1_000_000)),
                            ("loop", f"reboot loop, {LOOP_BOOTS:,} boots", corpus * LOOP_BOOTS)):
        path = tmp / f"{key}.log"
        path.write_bytes(data)
        del data
        lines = path.read_bytes().count(b"\n")
        res = cli([*bootlab_cmd(), "analyze", str(path), "--json"], repeat)
        ref = cli([sys.executable, "-c", _REFERENCE, str(path), *REFERENCE_PATTERNS], repeat)
        flag = "ok" if res["wall_s"] <= TARGET_COMMAND_S else "OVER target"
        print(f"{name:<34} {res['wall_s']:8.2f} {TARGET_COMMAND_S:7.1f} {ref['wall_s']:8.2f} "
              f"{res['wall_s'] / ref['wall_s']:6.2f} {lines / res['wall_s']:12,.0f} "
              f"{res['maxrss_kb'] / 1024:7.0f}  {len(res['milestones'] or [])}  {flag}")
        figures[f"capture_{key}"] = {"wall_s": res["wall_s"], "reference_s": ref["wall_s"],
                                     "lines": lines, "rss_mb": res["maxrss_kb"] / 1024,
                                     "rc": res["rc"], "stderr": res["stderr"][-300:]}
        path.unlink()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    opts = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="bootlab-bench-analyze-"))
    figures: dict[str, Any] = {"lines_target": TARGET_LINES_S}
    try:
        t0 = time.perf_counter()
        data = make_log(opts.lines)
        log = tmp / "boot.log"
        log.write_bytes(data)
        session = tmp / "boot.jsonl"
        records = write_session(session, data)
        n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        print(f"generated {n_lines:,} lines, {len(data) / 1e6:.1f} MB log, session "
              f"{session.stat().st_size / 1e6:.1f} MB ({records:,} rx records) in "
              f"{time.perf_counter() - t0:.1f} s  [{tmp}]")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, best of {opts.repeat}; "
              f"target >= {TARGET_LINES_S:,} lines/s")
        print()
        print(f"{'measure':<44} {'wall s':>8} {'cpu s':>7} {'lines/s':>12} {'MB/s':>8} "
              f"{'RSS MB':>16}")
        profile = load_profile("linux")

        # 1. in-process analyze on the bytes
        wall, cpu, rss0, peak, analysis = best_of(opts.repeat, lambda: analyze(data, profile))
        rss = f"{rss0 / 1024:.0f} -> {peak / 1024:.0f}"
        print(_row("analyze(bytes) in-process", n_lines, len(data), wall, cpu, rss))
        figures["inproc_log"] = {"wall_s": wall, "cpu_s": cpu, "lines_s": n_lines / wall,
                                 "mb_s": len(data) / wall / 1e6, "rss_before_mb": rss0 / 1024,
                                 "rss_peak_mb": peak / 1024, "lines": analysis.lines}
        summary_log = _summary(analysis)
        del analysis

        # 2. in-process: session file -> Source (load_session) -> analyze with host times
        def from_session() -> Analysis:
            source = open_source(session)
            return analyze(source.data, profile, source.line_time)

        wall, cpu, rss0, peak, analysis = best_of(opts.repeat, from_session)
        rss = f"{rss0 / 1024:.0f} -> {peak / 1024:.0f}"
        ssize = session.stat().st_size
        print(_row("open_source(session) + analyze in-process", n_lines, ssize, wall, cpu, rss))
        figures["inproc_session"] = {"wall_s": wall, "cpu_s": cpu, "lines_s": n_lines / wall,
                                     "mb_s": ssize / wall / 1e6, "rss_before_mb": rss0 / 1024,
                                     "rss_peak_mb": peak / 1024}
        summary_session = _summary(analysis)
        del analysis

        # 2b. the session exported line by line (`bootlab export --format jsonl`)
        def export_jsonl() -> int:
            return sum(1 for _ in jsonl(open_source(session)))

        wall, cpu, rss0, peak, _ = best_of(opts.repeat, export_jsonl)
        rss = f"{rss0 / 1024:.0f} -> {peak / 1024:.0f}"
        print(_row("open_source(session) + jsonl export", n_lines, ssize, wall, cpu,
                   rss))
        figures["inproc_jsonl"] = {"wall_s": wall, "cpu_s": cpu, "lines_s": n_lines / wall,
                                   "mb_s": ssize / wall / 1e6}

        # 3. the CLI, end to end
        for key, path, size in (("cli_log", log, len(data)), ("cli_session", session, ssize)):
            res = cli([*bootlab_cmd(), "analyze", str(path), "--json"], opts.repeat)
            label = f"bootlab analyze {path.name} --json (CLI)"
            if res["rc"] != 0:
                print(f"{label}: exit {res['rc']}: {res['stderr'].strip()[:300]}")
                continue
            print(_row(label, n_lines, size, res["wall_s"], res["cpu_s"],
                       f"peak {res['maxrss_kb'] / 1024:.0f}"))
            figures[key] = {"wall_s": res["wall_s"], "cpu_s": res["cpu_s"],
                            "lines_s": n_lines / res["wall_s"],
                            "mb_s": size / res["wall_s"] / 1e6,
                            "rss_peak_mb": res["maxrss_kb"] / 1024,
                            "stderr": res["stderr"].strip()[-300:],
                            "detected_kind": res["kind"], "lines": res["lines"],
                            "milestones": res["milestones"]}
        # the reference, in-process and as a command, on the same log
        wall, cpu, _, _, _ = best_of(opts.repeat, lambda: reference_scan(data))
        print(_row("reference: anchor regexes per line", n_lines, len(data), wall, cpu, "-"))
        res = cli([sys.executable, "-c", _REFERENCE, str(log), *REFERENCE_PATTERNS], opts.repeat)
        print(_row("reference as a command (boot.log)", n_lines, len(data), res["wall_s"],
                   res["cpu_s"], f"peak {res['maxrss_kb'] / 1024:.0f}"))
        figures["reference_inproc"] = {"wall_s": wall, "lines_s": n_lines / wall}
        figures["reference_cli"] = {"wall_s": res["wall_s"], "lines_s": n_lines / res["wall_s"]}
        ratio = figures["inproc_log"]["wall_s"] / wall
        print(f"analyze(bytes) / reference (wall): {ratio:.2f}x")
        if CORPUS_LOG.exists():
            captures(tmp, opts.repeat, figures)
        else:
            print(f"\n(no {CORPUS_LOG}: the big captures of issue 15 are skipped)")
        print()
        share = slow_path_share(data, profile)
        if share is not None:
            print(f"lines passing the marker prefilter (matched the slow way): {share:.1%}")
            figures["slow_path_share"] = share
        print(f"log:     {summary_log}")
        print(f"session: {summary_session}")
        for key in ("cli_log", "cli_session"):
            extra = figures.get(key, {})
            if extra:
                ms = extra.get("milestones") or []
                print(f"{key}: read as kind {extra.get('detected_kind')}, "
                      f"{extra.get('lines')} lines, {len(ms)} milestones")
            if extra.get("stderr"):
                print(f"{key} stderr: {extra['stderr']}")
        print("RSS: in-process = VmRSS before -> VmHWM during (the generated log itself is in "
              "memory); CLI = child's ru_maxrss.")
        if opts.json:
            print(json.dumps(figures, indent=1, default=str))
    finally:
        if opts.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
