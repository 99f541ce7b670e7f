"""How true are the stamps when the consumer is busy? Read designs side by side, one run.

    .venv/bin/python bench/bench_stamping.py [--lines 1500] [--flood-lines 100000]

A writer process sends lines into a pty, each carrying its own CLOCK_MONOTONIC send time. A
consumer process reads the pty's other end and does what a live console does with what it
reads: framing, matching and writing (busy Python: `--work-ms` per read plus `--line-us` per
line) and rendering a UI (`--render-ms` of busy Python every 16 ms). The stamp error of a line
is the stamp of the read that carried its first byte minus its send time. Two scenarios:

- paced: `--lines` lines at random 1-10 ms intervals (a boot log), 2 ms of work per read;
- flood: `--flood-lines` lines written as fast as the pty takes them, in blocks of 20 lines
  (the blocks' write time is the send time), 6.5 us of work per line (bootlab's measured
  ~150,000 lines/s), no per-read work.

Designs:

- `thread`: bootlab.transports.reader.StampingReader as shipped (a reader thread stamps at
  wake, the main thread consumes): interpreter switch interval 0.1 ms, reader thread at
  SCHED_FIFO priority 1 when allowed (the `reader` column says whether it was);
- `thread-0.5ms`, `thread-5ms`: the same with a switch interval of 0.5 ms, and Python's
  default 5 ms, to show what lowering it buys;
- `thread-normal`: the same without real-time priority (what an unprivileged user gets when
  RLIMIT_RTPRIO is 0), to show what that buys;
- `single`: the single-thread loop (read_chunks below: select, stamp, read,
  then the work, then select again), as `bootlab record` did before;
- `asyncio`: pyserial-asyncio, stamping in Protocol.data_received, the work done by a
  coroutine and the rendering by another task on the same event loop;
- `idle`: the reader thread with no work at all (the floor: scheduling, pty, clock).

The writer is pinned to CPU0 when there are two (`--pin` also pins the consumer to CPU1,
making its threads share one CPU, as the serialbench harness does). Figures are printed
(p50/p99/max in ms), nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import select
import statistics
import subprocess
import sys
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import serial

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bootlab.transports.port import PortError, has_descriptor, open_port  # noqa: E402
from bootlab.transports.reader import Chunk, StampingReader  # noqa: E402

VARIANTS = ("idle", "thread", "thread-0.5ms", "thread-5ms", "thread-normal", "single",
            "asyncio")
FRAME_S = 0.016
END = b"END\r\n"


# The former single-thread design (bootlab's first reader), measured as the baseline.
def read_chunks(port: serial.SerialBase, stop: Callable[[], bool],
                poll_s: float = 0.05) -> Iterator[tuple[bytes, int]]:
    """Yield `(data, t_ns)` as bytes arrive, and `(b"", now)` every `poll_s` while idle.

    Raises:
        PortError: the port went away (adapter unplugged, socket closed by the peer).
    """
    fd = port.fileno() if has_descriptor(port) else None
    while not stop():
        try:
            if fd is not None:
                ready, _, _ = select.select([fd], [], [], poll_s)
                t_ns = time.monotonic_ns()
                if not ready:
                    yield b"", t_ns
                    continue
                data = port.read(1 << 16)
                if not data:
                    raise PortError(f"{port.name}: the port closed (device gone or peer "
                                    "disconnected)")
            else:
                data = port.read(getattr(port, "in_waiting", 0) or 1)
                t_ns = time.monotonic_ns()
        except serial.SerialException as error:
            raise PortError(f"{port.name}: the port stopped working: {error}") from None
        except OSError as error:
            raise PortError(f"{port.name}: read failed: {error.strerror or error}") from None
        yield data, t_ns



def busy(ms: float) -> None:
    """Hold the interpreter for `ms` milliseconds, as Python code doing real work would."""
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        sum(range(50))


class Workload:
    """The consumer's work: per read, per line, and a frame to render every 16 ms."""

    def __init__(self, work_ms: float, line_us: float, render_ms: float) -> None:
        self.work_ms = work_ms
        self.line_us = line_us
        self.render_ms = render_ms
        self.next_frame = time.monotonic()

    def chunk(self, data: bytes) -> None:
        busy(self.work_ms + self.line_us * data.count(b"\n") / 1000)
        self.maybe_render()

    def maybe_render(self) -> None:
        if self.render_ms and time.monotonic() >= self.next_frame:
            busy(self.render_ms)
            self.next_frame = time.monotonic() + FRAME_S


def consume_thread(port: str, load: Workload, switch_s: float | None = None,
                   realtime: bool = True) -> list[tuple[int, bytes]]:
    chunks: list[tuple[int, bytes]] = []
    with StampingReader(port, 115200, realtime=realtime) as reader:
        if switch_s is not None:
            sys.setswitchinterval(switch_s)
        print("ready", "realtime" if reader.realtime else "normal", flush=True)
        for event in reader.events(lambda: bool(chunks) and chunks[-1][1].endswith(END),
                                   poll_s=0.004):
            if isinstance(event, Chunk):
                chunks.append((event.t_ns, event.data))
                load.chunk(event.data)
            else:
                load.maybe_render()
    return chunks


def consume_single(port: str, load: Workload) -> list[tuple[int, bytes]]:
    chunks: list[tuple[int, bytes]] = []
    serial_port = open_port(port, 115200)
    print("ready", flush=True)
    try:
        for data, t_ns in read_chunks(serial_port, lambda: bool(chunks) and
                                      chunks[-1][1].endswith(END), poll_s=0.004):
            if data:
                chunks.append((t_ns, data))
                load.chunk(data)
            else:
                load.maybe_render()
    finally:
        serial_port.close()
    return chunks


def consume_asyncio(port: str, load: Workload) -> list[tuple[int, bytes]]:
    import serial_asyncio

    chunks: list[tuple[int, bytes]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        pending: collections.deque[tuple[int, bytes]] = collections.deque()
        arrived = asyncio.Event()
        done = loop.create_future()

        class Stamping(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                pending.append((time.monotonic_ns(), data))
                arrived.set()

        async def process() -> None:
            while True:
                await arrived.wait()
                arrived.clear()
                while pending:
                    chunk = pending.popleft()
                    chunks.append(chunk)
                    busy(load.work_ms + load.line_us * chunk[1].count(b"\n") / 1000)
                    if chunk[1].endswith(END):
                        done.set_result(None)
                        return
                    await asyncio.sleep(0)

        async def render() -> None:
            while load.render_ms:
                busy(load.render_ms)
                await asyncio.sleep(FRAME_S - load.render_ms / 1000)

        transport, _ = await serial_asyncio.create_serial_connection(loop, Stamping, port,
                                                                     baudrate=115200)
        print("ready", flush=True)
        tasks = [asyncio.create_task(process()), asyncio.create_task(render())]
        await done
        for task in tasks:
            task.cancel()
        transport.close()

    asyncio.run(main())
    return chunks


def errors_ms(chunks: list[tuple[int, bytes]]) -> list[float]:
    """Per line: stamp of the read holding its first byte minus the send time it carries."""
    out: list[float] = []
    stamp: int | None = None
    line = bytearray()
    for t_ns, data in chunks:
        start = 0
        while start < len(data):
            if stamp is None:
                stamp = t_ns
            end = data.find(b"\n", start)
            if end < 0:
                line += data[start:]
                break
            line += data[start:end]
            fields = bytes(line).split()
            if len(fields) >= 3 and fields[0] == b"S":
                out.append((stamp - int(fields[2])) / 1e6)
            line.clear()
            stamp = None
            start = end + 1
    return out


SCENARIOS = {"paced": {"work_ms": 2.0, "line_us": 0.0}, "flood": {"work_ms": 0.0, "line_us": 6.5}}


def run_consumer(args: argparse.Namespace) -> None:
    if args.pin and hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {1})
    work = SCENARIOS[args.scenario]
    idle = args.variant == "idle"
    load = Workload(0 if idle else work["work_ms"], 0 if idle else work["line_us"],
                    0 if idle else args.render_ms)
    consumers: dict[str, Callable[[], list[tuple[int, bytes]]]] = {
        "idle": lambda: consume_thread(args.port, load),
        "thread": lambda: consume_thread(args.port, load),
        "thread-0.5ms": lambda: consume_thread(args.port, load, switch_s=0.0005),
        "thread-5ms": lambda: consume_thread(args.port, load, switch_s=0.005),
        "thread-normal": lambda: consume_thread(args.port, load, realtime=False),
        "single": lambda: consume_single(args.port, load),
        "asyncio": lambda: consume_asyncio(args.port, load),
    }
    chunks = consumers[args.variant]()
    print(json.dumps({"errors_ms": errors_ms(chunks), "reads": len(chunks)}), flush=True)


def run_writer(args: argparse.Namespace) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {0})
    rng = random.Random(args.seed)
    fd = args.fd
    if args.scenario == "paced":
        for seq in range(args.lines):
            time.sleep(rng.uniform(0.001, 0.010))  # the send time is taken at the write itself
            pad = b"x" * rng.randrange(10, 120)
            t_ns = time.monotonic_ns()
            os.write(fd, b"S %06d %d %s\r\n" % (seq, t_ns, pad))
    else:
        for first in range(0, args.flood_lines, 20):
            t_ns = time.monotonic_ns()
            block = b"".join(b"S %06d %d flood line with some text to fill the console\r\n"
                             % (seq, t_ns) for seq in range(first, first + 20))
            view = memoryview(block)
            while view:
                view = view[os.write(fd, view):]
    time.sleep(0.05)
    os.write(fd, END)


def run_variant(scenario: str, variant: str, args: argparse.Namespace) -> dict[str, Any]:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    port = os.ttyname(slave)
    me = [sys.executable, str(Path(__file__).resolve())]
    common = ["--scenario", scenario, "--lines", str(args.lines),
              "--flood-lines", str(args.flood_lines), "--render-ms", str(args.render_ms),
              "--seed", str(args.seed), *(["--pin"] if args.pin else [])]
    consumer = subprocess.Popen([*me, "--role", "consumer", "--variant", variant,
                                 "--port", port, *common], stdout=subprocess.PIPE, text=True)
    assert consumer.stdout is not None
    ready = consumer.stdout.readline().split()
    assert ready[0] == "ready", ready
    time.sleep(0.2)
    started = time.monotonic()
    writer = subprocess.run([*me, "--role", "writer", "--fd", str(master), *common],
                            pass_fds=[master], check=True, timeout=600)
    out, _ = consumer.communicate(timeout=300)
    elapsed = time.monotonic() - started
    os.close(master)
    os.close(slave)
    assert writer.returncode == 0 and consumer.returncode == 0
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["priority"] = ready[1] if len(ready) > 1 else "-"
    result["lines_per_s"] = len(result["errors_ms"]) / elapsed
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--role", choices=["bench", "consumer", "writer"], default="bench")
    parser.add_argument("--scenario", choices=list(SCENARIOS))
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--variant", choices=VARIANTS)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--port")
    parser.add_argument("--fd", type=int)
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--flood-lines", type=int, default=100_000)
    parser.add_argument("--render-ms", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pin", action="store_true",
                        help="pin the consumer to CPU1 (its threads then share one CPU)")
    args = parser.parse_args()
    if args.role == "consumer":
        run_consumer(args)
        return
    if args.role == "writer":
        run_writer(args)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, consumer "
          f"{'pinned' if args.pin else 'not pinned'}; rendering {args.render_ms} ms every "
          f"{FRAME_S * 1000:.0f} ms; paced: {args.lines} lines at 1-10 ms, "
          f"{SCENARIOS['paced']['work_ms']} ms work per read; flood: {args.flood_lines} lines, "
          f"{SCENARIOS['flood']['line_us']} us work per line")
    print(f"{'scenario':<9} {'design':<14} {'reader':<9} {'lines':>7} {'reads':>7} "
          f"{'lines/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'>1 ms %':>8}")
    for scenario in args.scenarios.split(","):
        for variant in args.variants.split(","):
            result = run_variant(scenario, variant, args)
            errors = sorted(result["errors_ms"])
            p99 = errors[min(len(errors) - 1, int(len(errors) * 0.99))]
            late = 100 * sum(e > 1 for e in errors) / len(errors)
            print(f"{scenario:<9} {variant:<14} {result['priority']:<9} {len(errors):>7} "
                  f"{result['reads']:>7} {result['lines_per_s']:>9,.0f} "
                  f"{statistics.median(errors):>8.3f} {p99:>8.3f} {errors[-1]:>8.3f} "
                  f"{late:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
