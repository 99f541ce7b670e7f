"""Reproduce: the line after a very long line is stamped late by `bootlab record`.

    .venv/bin/python bench/repro_long_line_stamp.py [--sizes 65536,262144,1048576,3145728]

For each size it starts `bootlab record` on a fresh pty, sends a short line, then one line of
SIZE bytes (in 4 KiB writes), its "\\r\\n", waits 5 ms, sends "after the long line\\r\\n", and
stops the recorder with SIGINT. From the session file it prints, relative to the first line
(so no clock conversion is involved):

- late ms: the stamp of "after the long line" minus its true send time. bootlab stamps a read
  when select() wakes, but after the read carrying the newline it first frames and matches the
  long line (and prunes the chunk list it kept for it), so bytes arriving meanwhile are stamped
  when that work is done;
- stall ms: the gap between the read holding the newline and the next read, minus the 5 ms
  pause (the read loop's stall).

It also prints bootlab's CPU time for the run. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serialbench_bootlab import bootlab_command, session_chain, session_lines  # noqa: E402

PAUSE_S = 0.005
"""Pause between the long line's newline and the next line."""


def run_one(size: int, chunk: int = 4096) -> dict[str, float]:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    port = os.ttyname(slave)
    work = Path(tempfile.mkdtemp(prefix="bootlab-repro-"))
    proc = subprocess.Popen([*bootlab_command(), "record", port, "--sessions", str(work), "-q"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not list(work.glob("*.jsonl")):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("bootlab record did not start")
            time.sleep(0.02)
        time.sleep(0.3)
        t_first = time.monotonic()
        os.write(master, b"before the long line\r\n")
        time.sleep(0.05)
        body = b"LONG:" + b"x" * (size - 5)
        for offset in range(0, len(body), chunk):
            view = memoryview(body)[offset:offset + chunk]
            while view:
                view = view[os.write(master, view):]
            time.sleep(0.0002)
        time.sleep(0.2)
        os.write(master, b"\r\n")
        time.sleep(PAUSE_S)
        t_after = time.monotonic()
        os.write(master, b"after the long line\r\n")
        time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        _, status, usage = os.wait4(proc.pid, 0)
        os.close(master)
        os.close(slave)
    lines = session_lines(session_chain(work))
    stamps = {raw.rstrip(b"\r"): t for t, raw in lines}
    t0 = stamps[b"before the long line"]
    t1 = stamps[b"after the long line"]
    assert t0 is not None and t1 is not None
    late_ms = ((t1 - t0) - (t_after - t_first)) * 1e3
    # the read loop's stall after the newline, from the rx records
    rx: list[tuple[int, bytes]] = []
    for path in session_chain(work):
        for raw in path.read_bytes().split(b"\n")[1:]:
            if b'"rx"' in raw:
                record = json.loads(raw)
                rx.append((record["t"], record["rx"].encode("latin-1")))
    gap_ms = float("nan")
    for index, (t_ns, data) in enumerate(rx):
        if b"\n" in data and index + 1 < len(rx) and b"after" in rx[index + 1][1] \
                and not data.startswith(b"before"):
            gap_ms = (rx[index + 1][0] - t_ns) / 1e6 - PAUSE_S * 1e3
    return {"size": size, "late_ms": late_ms, "gap_ms": gap_ms, "reads": len(rx),
            "cpu_s": usage.ru_utime + usage.ru_stime, "exit": os.waitstatus_to_exitcode(status)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,65536,262144,1048576,3145728")
    ap.add_argument("--repeat", type=int, default=2)
    opts = ap.parse_args(argv)
    print(f"{'line bytes':>10} {'run':>3} {'late ms':>8} {'stall ms':>8} {'reads':>6} "
          f"{'cpu s':>6}")
    for size in (int(s) for s in opts.sizes.split(",")):
        for run in range(1, opts.repeat + 1):
            r = run_one(size)
            print(f"{size:>10} {run:>3} {r['late_ms']:8.2f} {r['gap_ms']:8.2f} "
                  f"{r['reads']:>6} {r['cpu_s']:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
