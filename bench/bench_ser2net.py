"""What ser2net costs in stamp error: bootlab on a local pty vs the same pty through ser2net.

    .venv/bin/python bench/bench_ser2net.py [--scripts boot,bursty,garbage] [--pace both]
                                            [--configs local,raw,...] [--repeat 1] [--json]

A board farm (labgrid) exports each serial port through ser2net, and bootlab reads it over TCP:
raw (socket://) or RFC 2217 (rfc2217://). ser2net holds what it reads from the port until the
line has been quiet for its `chardelay` (about two characters, at least `chardelay-min` 1 ms,
at most `chardelay-max` 20 ms) and sends it as one batch, so a line's first byte reaches
bootlab, and is stamped, later than on a local port.

Each run feeds the same traffic into the master side of a fresh pty: the serialbench scripts
and feeder of the shared harness (`../shared/bench`, beside the repository): `boot` (U-Boot,
300 printk lines with bursts, a prompt), `bursty` (25 bursts of 40 lines) and `garbage`
(binary bytes, 0xFF included, which telnet must escape), unpaced and paced at 115200 baud.
The feeder takes CLOCK_MONOTONIC just before the write() carrying each line's first byte.
`bootlab record URL -q` (bootlab's own reader thread and recorder) reads the slave side
directly (`local`) or through ser2net serving the slave (Debian's ser2net 4, labgrid's
connection: `serialdev(nouucplock=true),PTY,115200n81,local`), then is stopped with SIGINT.
The stamp error of a line is its stamp in the session (the read holding its first byte,
`start_monotonic_ns` + t) minus its send time: absolute, no alignment, same clock.

Printed per script and pace: p50/p95/p99/max stamp error (ms, pooled over repeats), the share
of sent bytes recorded in byte-exact lines, and p99 / the local pty's p99. Beside it, the
figure bootlab's session note quotes (bootlab/transports/netport.py). Nothing is asserted.
The feeder is pinned to CPU0 and bootlab to CPU1 when there are two; ser2net is not pinned.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import os
import pickle
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "bench"
for folder in (ROOT, ROOT / "bench", ROOT / "tests", SHARED):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import sb_scripts  # noqa: E402
import serialbench  # noqa: E402
from serialbench_bootlab import bootlab_command, session_chain, session_lines  # noqa: E402
from support.ser2net import Ser2net, ser2net_binary  # noqa: E402

from bootlab.transports import netport  # noqa: E402

BAUD = 115200
SYNC = b"#SERIALBENCH-SYNC %d#\r\n"


@dataclass(frozen=True)
class Config:
    """How bootlab reaches the pty."""

    name: str
    protocol: str | None  # None: the pty itself
    options: tuple[tuple[str, str | int | bool], ...] = ()
    about: str = ""


CONFIGS = {c.name: c for c in (
    Config("local", None, about="the pty itself"),
    Config("raw", "raw", about="ser2net, raw TCP, default chardelay"),
    Config("raw-nodelay", "raw", (("chardelay", False),), "ser2net, raw TCP, chardelay: false"),
    Config("rfc2217", "rfc2217", about="ser2net, telnet(rfc2217), default chardelay (labgrid)"),
    Config("rfc2217-nodelay", "rfc2217", (("chardelay", False),),
           "ser2net, telnet(rfc2217), chardelay: false"),
)}


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile of sorted `values`."""
    return values[min(len(values) - 1, max(0, math.ceil(p / 100 * len(values)) - 1))]


def _rx_bytes(sessions: Path) -> int:
    """Received bytes in the session files so far (to see when everything has arrived)."""
    total = 0
    for path in sessions.glob("*.jsonl"):
        with contextlib.suppress(OSError):
            for line in path.read_bytes().split(b"\n")[1:]:
                with contextlib.suppress(ValueError):
                    total += len(json.loads(line).get("rx", "")) if line else 0
    return total


def _session_text(sessions: Path) -> bytes:
    parts = []
    for path in sessions.glob("*.jsonl"):
        with contextlib.suppress(OSError):
            parts.append(path.read_bytes())
    return b"".join(parts)


def _monotonic_lines(sessions: Path) -> list[tuple[float, bytes]]:
    """Recorded lines with the CLOCK_MONOTONIC seconds of their first byte."""
    chain = session_chain(sessions)
    with chain[0].open("rb") as handle:
        header = json.loads(handle.readline())
    epoch_minus_mono = header["started"] - header["start_monotonic_ns"] / 1e9
    return [(t - epoch_minus_mono, line) for t, line in session_lines(chain) if t is not None]


def _pin(cpu: int) -> None:
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {cpu})


def run_once(config: Config, script_name: str, pace: int, work: Path) -> dict[str, Any]:
    """Feed one script through one config; the per-line errors (ms) and byte accounting."""
    script = sb_scripts.make(script_name)
    stream = script.stream()
    sent = sb_scripts.split_lines(stream)
    starts = sb_scripts.line_starts(stream)
    work.mkdir(parents=True)
    master, slave, device = serialbench.open_pty(BAUD)
    sessions = work / "sessions"
    server: Ser2net | None = None
    recorder: subprocess.Popen[bytes] | None = None
    try:
        if config.protocol is not None:
            server = Ser2net(device, work / "ser2net", config.protocol, dict(config.options))
        url = server.url if server else device
        with (work / "bootlab.err").open("wb") as err:
            recorder = subprocess.Popen(
                [*bootlab_command(), "record", url, "--baud", str(BAUD), "--sessions",
                 str(sessions), "-q", "--no-reconnect"], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=err, preexec_fn=lambda: _pin(1))
        sync_bytes = _handshake(master, sessions, recorder)
        before = serialbench.cpu_snapshot(), time.monotonic()
        feed = _feed(master, script, starts, pace, work)
        ours = {os.getpid(), feed["pid"], recorder.pid, *([server.proc.pid] if server else [])}
        background = _background_pct(before, ours)
        expected = sync_bytes + len(stream)
        deadline = time.monotonic() + 15
        while _rx_bytes(sessions) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)
    finally:
        if recorder is not None:
            recorder.send_signal(signal.SIGINT)
            try:
                recorder.wait(timeout=30)
            except subprocess.TimeoutExpired:
                recorder.kill()
                recorder.wait()
        if server is not None:
            server.close()
        os.close(master)
        os.close(slave)
    return {**_score(sent, feed["before"], _monotonic_lines(sessions)), "bg_pct": background}


def _background_pct(before: tuple[dict[int, Any], float], ours: set[int]) -> float:
    """CPU other user processes used since `before`, in % of the machine (noise check)."""
    snapshot, started = before
    _kernel, other = serialbench.others_cpu(snapshot, serialbench.cpu_snapshot(), ours)
    span = (time.monotonic() - started) * serialbench.CLK_TCK * (os.cpu_count() or 1)
    return 100.0 * sum(other.values()) / span if span > 0 else 0.0


def _handshake(master: int, sessions: Path, recorder: subprocess.Popen[bytes]) -> int:
    """Sync lines until the session shows one (bootlab, and ser2net, have the port open),
    five more, and a quiet gap; the bytes written."""
    written = 0
    for k in range(100):
        written += os.write(master, SYNC % k)
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            if b"SERIALBENCH-SYNC %d" % k in _session_text(sessions):
                for extra in range(k + 1, k + 6):
                    time.sleep(0.02)
                    written += os.write(master, SYNC % extra)
                time.sleep(0.3)
                return written
            if recorder.poll() is not None:
                raise RuntimeError(f"bootlab record exited ({recorder.returncode})")
            time.sleep(0.01)
    raise RuntimeError("bootlab never recorded a sync line")


def _feed(master: int, script: sb_scripts.Script, starts: list[int], pace: int,
          work: Path) -> dict[str, Any]:
    """Run the shared harness's feeder in a forked process (pinned to CPU0); its results."""
    result = work / "feed.pkl"
    cpu = 0 if (os.cpu_count() or 1) >= 2 else None
    feeder = multiprocessing.get_context("fork").Process(
        target=serialbench.feeder_main,
        args=(master, script.ops, starts, pace / 10.0, 0.001, 4096,
              time.monotonic() + 0.05, result, cpu))
    feeder.start()
    feeder.join()
    with result.open("rb") as handle:
        feed: dict[str, Any] = pickle.load(handle)
    return {**feed, "pid": feeder.pid}


def _score(sent: list[bytes], send_s: Any, got: list[tuple[float, bytes]]) -> dict[str, Any]:
    """Match recorded lines to sent ones (the harness's matcher); errors of the matched."""
    got = [(t, line) for t, line in got if b"SERIALBENCH-SYNC" not in line]
    pairs, _missing, _extra = serialbench.match_lines(sent, [line for _, line in got])
    errors = [(got[j][0] - send_s[i]) * 1e3 for i, j in pairs]
    exact = sum(len(sent[i]) for i, j in pairs if sent[i] == got[j][1])
    return {"errors_ms": errors, "exact_bytes": exact, "sent_bytes": sum(map(len, sent)),
            "lines_sent": len(sent), "lines_matched": len(pairs)}


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One row from repeated runs: the median over runs of each run's p50/p95/p99 (as the
    harness does: one noisy run does not move it), the worst max, bytes intact pooled."""
    sent = sum(run["sent_bytes"] for run in runs)
    row: dict[str, Any] = {
        "lines": sum(run["lines_matched"] for run in runs),
        "lines_sent": sum(run["lines_sent"] for run in runs),
        "intact_pct": 100.0 * sum(run["exact_bytes"] for run in runs) / max(1, sent),
        "bg_pct": max(run["bg_pct"] for run in runs)}
    timed = [sorted(run["errors_ms"]) for run in runs if run["errors_ms"]]
    if timed:
        for p in (50, 95, 99):
            row[f"p{p}"] = statistics.median(percentile(errors, p) for errors in timed)
        row["max"] = max(errors[-1] for errors in timed)
    return row


def measure(config: Config, script: str, pace: int, folder: Path,
            args: argparse.Namespace) -> dict[str, Any]:
    """One run, run again (at most `--noise-retries` times) while the machine was busy."""
    for attempt in range(args.noise_retries + 1):
        run = run_once(config, script, pace, folder / f"try{attempt}")
        if run["bg_pct"] <= args.noise_max:
            break
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scripts", default="boot,bursty,garbage",
                        help="serialbench scripts (boot, bursty, garbage, partial, ...)")
    parser.add_argument("--pace", choices=["both", "0", str(BAUD)], default="both",
                        help=f"0: unpaced; {BAUD}: bytes no faster than the wire")
    parser.add_argument("--configs", default=",".join(CONFIGS),
                        help=f"from {', '.join(CONFIGS)} (local first: ratios need it)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per row, the configs interleaved (rows show medians)")
    parser.add_argument("--noise-max", type=float, default=25.0,
                        help="re-run a run in which other processes used more than this %% "
                             "of the machine")
    parser.add_argument("--noise-retries", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--json", action="store_true", help="also print one JSON object per row")
    args = parser.parse_args()
    configs = [CONFIGS[name] for name in args.configs.split(",")]
    binary = ser2net_binary()
    if any(c.protocol for c in configs) and binary is None:
        sys.exit("bench_ser2net: ser2net is not installed (apt-get install ser2net)")
    paces = [0, BAUD] if args.pace == "both" else [int(args.pace)]
    version = subprocess.run([binary, "-v"], capture_output=True, text=True).stdout.strip() \
        if binary else "no ser2net"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {version.split('/')[-1]}, "
          f"load {os.getloadavg()[0]:.2f}; repeat {args.repeat}")
    for config in configs:
        print(f"  {config.name:<16} {config.about}")
    print(f"{'script':<8} {'pace':>7} {'config':<16} {'lines':>6} {'p50 ms':>7} {'p95 ms':>7} "
          f"{'p99 ms':>7} {'max ms':>7} {'intact %':>8} {'p99/local':>9} {'bg %':>5}")
    work = Path(tempfile.mkdtemp(prefix="bench-ser2net-"))
    for script in args.scripts.split(","):
        for pace in paces:
            runs: dict[str, list[dict[str, Any]]] = {c.name: [] for c in configs}
            for rep in range(args.repeat):
                for config in configs:
                    folder = work / f"{script}-{pace}-{config.name}-{rep}"
                    runs[config.name].append(measure(config, script, pace, folder, args))
            local_p99 = summarize(runs["local"]).get("p99") if "local" in runs else None
            for config in configs:
                row = summarize(runs[config.name])
                ratio = row["p99"] / local_p99 if local_p99 and "p99" in row else None
                figures = " ".join(f"{row[k]:>7.2f}" if k in row else f"{'-':>7}"
                                   for k in ("p50", "p95", "p99", "max"))
                print(f"{script:<8} {pace or 'unpaced':>7} {config.name:<16} "
                      f"{row['lines']:>6} {figures} {row['intact_pct']:>8.2f} "
                      f"{f'{ratio:.1f}x' if ratio else '-':>9} {row['bg_pct']:>5.0f}",
                      flush=True)
                if args.json:
                    print(json.dumps({"script": script, "pace": pace, "config": config.name,
                                      **row, "p99_ratio": ratio}), flush=True)
    quoted = ", ".join(f"{name} {p50} / {p99}" for name, (p50, p99) in (
        ("raw", netport.SER2NET_MS["socket"]), ("rfc2217", netport.SER2NET_MS["rfc2217"]),
        ("local", netport.LOCAL_MS), ("raw-nodelay", netport.NODELAY_MS)))
    print(f"bootlab's note (bootlab/transports/netport.py) quotes p50 / p99 ms, boot at "
          f"{BAUD}: {quoted}")
    if args.keep:
        print(f"work folder: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
