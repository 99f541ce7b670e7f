"""A long flood with the console server going away again and again: does `bootlab record`
leak, lose or drift? Prints figures; asserts nothing.

    .venv/bin/python bench/soak.py                  # an hour
    .venv/bin/python bench/soak.py --minutes 3      # a quick look

A TCP console server (ser2net, QEMU) sends fixed-size numbered lines at `--rate` bytes/s to
`bootlab record socket://127.0.0.1:PORT`. Every `--every` seconds it goes away for `--down`
seconds (the connection and the listening socket closed) and comes back on the same port. At
the end bootlab is stopped with SIGTERM and its session file is read record by record:

- bytes sent and recorded, loss (sent minus recorded) and whether the recorded stream is
  exactly the sent one, byte for byte, in order;
- outages, and the gap and reconnect events bootlab recorded for them;
- reconnect latency: the reconnect event's time minus the moment the port was back (both
  CLOCK_MONOTONIC: the session header has its start), max and median;
- bootlab's resident memory once a minute, and its CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

MAIN = Path(__file__).resolve().parent.parent
LINE = 64
"""Bytes per line, CRLF included: the expected byte at any offset is computable."""
TICK_S = 0.01


def expected(offset: int, size: int) -> bytes:
    """The stream's bytes [offset, offset + size)."""
    first, last = offset // LINE, (offset + size - 1) // LINE
    text = b"".join(_line(n) for n in range(first, last + 1))
    start = offset - first * LINE
    return text[start:start + size]


def _line(number: int) -> bytes:
    head = b"soak line %010d " % number
    return head + b"." * (LINE - len(head) - 2) + b"\r\n"


def rss_kb(pid: int) -> int:
    """Resident memory of a process, KiB (0 once it is gone)."""
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmRSS:"):
                return int(row.split()[1])
    except OSError:
        pass
    return 0


def cpu_s(pid: int) -> float:
    """User plus system CPU time of a process, seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Server:
    """The console server: sends the stream at a rate, goes away and comes back."""

    rate: int
    port: int = 0
    sent: int = 0
    back_ns: list[int] = field(default_factory=list)
    """When the port was there again after each outage."""
    _listener: socket.socket | None = None
    _conn: socket.socket | None = None

    def listen(self) -> str:
        """Open the port; its URL."""
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(30)
        self.port = self._listener.getsockname()[1]
        return f"socket://127.0.0.1:{self.port}"

    def serve(self, seconds: float) -> None:
        """Take bootlab's connection and send at the rate for `seconds`."""
        assert self._listener is not None
        self._conn, _ = self._listener.accept()
        start, end = time.monotonic(), time.monotonic() + seconds
        base = self.sent
        while (now := time.monotonic()) < end:
            due = base + int((now - start) * self.rate)
            if due > self.sent:
                self._conn.sendall(expected(self.sent, due - self.sent))
                self.sent = due
            time.sleep(TICK_S)

    def go_away(self) -> None:
        """Close the connection and the port."""
        if self._conn is not None:
            self._conn.close()
        if self._listener is not None:
            self._listener.close()

    def come_back(self) -> None:
        """Listen on the same port again."""
        self.listen()
        self.back_ns.append(time.monotonic_ns())


def sample_memory(pid: int, stop: threading.Event, samples: list[tuple[float, int]]) -> None:
    """Resident memory every 5 s; a line a minute."""
    started = time.monotonic()
    next_print = 60.0
    while not stop.wait(5):
        elapsed = time.monotonic() - started
        samples.append((elapsed, rss_kb(pid)))
        if elapsed >= next_print:
            print(f"  {elapsed / 60:5.1f} min: bootlab RSS {samples[-1][1] / 1024:.1f} MB",
                  flush=True)
            next_print += 60


@dataclass
class Recorded:
    """What the session file holds."""

    size: int = 0
    bytes: int = 0
    intact: bool = True
    first_bad: int | None = None
    gaps: int = 0
    reconnects: list[int] = field(default_factory=list)
    """Absolute CLOCK_MONOTONIC ns of each reconnect event."""


def read_session(path: Path) -> Recorded:
    """Read the session record by record, checking every received byte against the stream."""
    out = Recorded(size=path.stat().st_size)
    with path.open("rb") as handle:
        start = json.loads(handle.readline())["start_monotonic_ns"]
        for line in handle:
            record = json.loads(line)
            if "rx" in record:
                data = record["rx"].encode("latin-1")
                if out.intact and data != expected(out.bytes, len(data)):
                    out.intact, out.first_bad = False, out.bytes
                out.bytes += len(data)
            elif record.get("event") == "gap":
                out.gaps += 1
            elif record.get("event") == "reconnect":
                out.reconnects.append(start + record["t"])
    return out


def latencies(back_ns: list[int], reconnects: list[int]) -> list[float]:
    """For each return of the port, seconds until bootlab's next reconnect event."""
    out = []
    for back in back_ns:
        later = [t for t in reconnects if t >= back]
        if later:
            out.append((min(later) - back) / 1e9)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--rate", type=int, default=100_000, help="bytes/s (default 100,000)")
    parser.add_argument("--every", type=float, default=30.0,
                        help="seconds between outages (default 30)")
    parser.add_argument("--down", type=float, default=1.0,
                        help="seconds the port is away each time (default 1)")
    parser.add_argument("--keep", action="store_true", help="keep the session file")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bootlab-soak-"))
    server = Server(args.rate)
    url = server.listen()
    proc = subprocess.Popen([sys.executable, "-m", "bootlab", "record", url, "--sessions",
                             str(work), "-q"], cwd=MAIN, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    print(proc.stderr.readline().strip(), flush=True)  # "recording ...": it is up
    samples: list[tuple[float, int]] = [(0.0, rss_kb(proc.pid))]
    stop = threading.Event()
    threading.Thread(target=sample_memory, args=(proc.pid, stop, samples), daemon=True).start()
    print(f"soak: {args.minutes:g} min, {args.rate:,} B/s, away {args.down:g} s every "
          f"{args.every:g} s, into {work}", flush=True)
    end = time.monotonic() + args.minutes * 60
    outages = 0
    while (left := end - time.monotonic()) > 0:
        server.serve(min(args.every, left))
        if end - time.monotonic() > args.down + 1:
            outages += 1
            server.go_away()
            time.sleep(args.down)
            server.come_back()
    cpu = cpu_s(proc.pid)
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    stop.set()
    server.go_away()
    (path,) = work.glob("*.jsonl")
    recorded = read_session(path)
    waits = latencies(server.back_ns, recorded.reconnects)
    rss = [kb for _, kb in samples if kb]
    print(f"""
bootlab record, {args.minutes:g} min soak (exit {proc.returncode})
  bytes sent            {server.sent:,}
  bytes recorded        {recorded.bytes:,} ({"identical to the sent stream" if recorded.intact
                                             else f"differs from byte {recorded.first_bad}"})
  lost                  {server.sent - recorded.bytes:,} bytes
  session file          {recorded.size:,} bytes
  outages               {outages}; gap events {recorded.gaps}, reconnect events \
{len(recorded.reconnects)}
  reconnect latency     max {max(waits, default=0) * 1000:.0f} ms, median \
{statistics.median(waits) * 1000 if waits else 0:.0f} ms (after the port was back)
  RSS                   start {rss[0] / 1024:.1f} MB, max {max(rss) / 1024:.1f} MB, end \
{rss[-1] / 1024:.1f} MB
  CPU                   {cpu:.1f} s ({cpu / (args.minutes * 60) * 100:.1f} % of one core)""")
    if proc.returncode:
        print(err)
    if args.keep:
        print(f"  kept                  {path}")
    else:
        shutil.rmtree(work)  # the session and the index its writer kept beside it


if __name__ == "__main__":
    main()
