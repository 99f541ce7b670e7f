"""A one-hour recording: how fast the app opens it and seeks in it, how much memory `analyze`
and `compare` of it take. Prints figures beside their targets; asserts nothing.

    .venv/bin/python bench/bench_long_session.py                 # 60 minutes (~390 MB file)
    .venv/bin/python bench/bench_long_session.py --minutes 5 --keep

The session is generated in a temporary folder as `bootlab record` writes one: a real boot
of the QEMU board (the bundled example), then `--rate` bytes/s of numbered 64-byte lines (as
`bench/soak.py` sends) in one rx record per 50 ms, for `--minutes`. Measured:

1. its index: written by the session writer as it closed the session (as `bootlab record`
   and the app write it), read back; built again by one pass over the file;
2. the app (`bootlab SESSION`, headless, 120x40) from the start to its first screen with
   console lines: with the index its writer kept, without any (a session of an older
   bootlab, or a crashed recording), and with the one that open built (target <= 2 s);
   the reference: the loader before the index, `load_session` of the whole file;
3. seeks in the replay (the player on its worker thread, as the app drives it): right after
   opening (to the end, the middle, the start), while the scan ahead of playback runs: until
   the console is there, and until the phases there are too; then,
   in a second opening, once the scan ahead has left its checkpoints (its time is printed):
   forward a minute, then back to earlier moments and forward again (target <= 0.5 s); the
   reference: what a seek cost before checkpoints, the capture fed from the first byte;
4. `bootlab analyze SESSION --json` and `bootlab compare SESSION EXAMPLE --json` end to end:
   wall time and peak RSS (the child's ru_maxrss); the reference: the peak RSS of loading the
   session whole (`load_session`), what analysis needed before it streamed.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MAIN = Path(__file__).resolve().parent.parent
if str(MAIN) not in sys.path:
    sys.path.insert(0, str(MAIN))

from bench_analyze import bootlab_cmd, cli  # noqa: E402

from bootlab.core.analysis.pipeline import Capture  # noqa: E402
from bootlab.core.capture.session import SessionWriter, load_session  # noqa: E402
from bootlab.core.capture.session_index import index_path, session_index  # noqa: E402

EXAMPLE = MAIN / "examples" / "20261130-020226-default-01.jsonl"
LINE = 64
RECORD_S = 0.05
TARGET_OPEN_S = 2.0
TARGET_SEEK_S = 0.5
_LOAD = "import sys; from pathlib import Path; from bootlab.core.capture.session import " \
        "load_session; load_session(Path(sys.argv[1]))"


def make_session(path: Path, minutes: float, rate: int) -> int:
    """Write the session; the number of bytes received in it."""
    boot = load_session(EXAMPLE)
    writer = SessionWriter(path, {"label": "soak", "board": "qemu", "port": "/dev/null",
                                  "baud": 115200, "profile": "linux", "settings": {}}, 0)
    for t_ns, data in boot.chunks:
        writer.rx(data, t_ns)
    start_ns = boot.chunks[-1][0] + 1_000_000
    per_record = int(rate * RECORD_S)
    lines = b"".join(b"soak line %010d %s\r\n" % (n, b"." * (LINE - 28))
                     for n in range(per_record // LINE + 2))
    total = sum(len(d) for _, d in boot.chunks)
    records = int(minutes * 60 / RECORD_S)
    for i in range(records):
        offset = (i * per_record) % LINE
        writer.rx(lines[offset:offset + per_record], start_ns + int(i * RECORD_S * 1e9))
        total += per_record
        if i % 256 == 0:
            writer.flush()
    writer.close(start_ns + int(records * RECORD_S * 1e9))
    return total


def first_screen(path: Path) -> float:
    """Seconds from nothing to the app's first screen showing console lines."""
    from bootlab.ui.launch import replay_app
    from bootlab.ui.main.screen import MainScreen

    async def run() -> float:
        t0 = time.perf_counter()
        app = replay_app(path, speed=1.0)
        async with app.run_test(size=(120, 40)) as pilot:
            while True:
                screen = app.screen_stack[0]
                if isinstance(screen, MainScreen) and screen.console.line_count:
                    return time.perf_counter() - t0
                await pilot.pause(0.01)
    return asyncio.run(run())


class _Posted:
    """Collects what the player posts; says when a new message came."""

    def __init__(self) -> None:
        self.count = 0
        self.event = threading.Event()
        self.phases = threading.Event()
        """Set when a message with the boot (the phase pane's data) came."""

    def __call__(self, message: object) -> None:
        self.count += 1
        self.event.set()
        if getattr(message, "boot", None) is not None:
            self.phases.set()


def seeks(path: Path, targets: list[float], wait_scan: bool = True,
          ) -> tuple[float, list[tuple[float, float, float]]]:
    """Seconds until the scan ahead of playback was done (`wait_scan`; else the seeks start
    at once, racing it, and the figure is NaN), then (target, seconds until the player sits
    there with the console posted, seconds until the phases there are posted too) for each
    seek."""
    from bootlab.session.replay import open_replay

    player = open_replay(path, speed=1.0).player
    player.set_paused(True)
    posted = _Posted()
    stop = threading.Event()
    worker = threading.Thread(target=player.run, args=(posted, stop.is_set), daemon=True)
    t0 = time.perf_counter()
    worker.start()
    scan_s = float("nan")
    if wait_scan:
        player.scanned.wait(600)
        scan_s = time.perf_counter() - t0
    out = []
    for target in targets:
        if wait_scan or out:
            time.sleep(0.3)
        posted.event.clear()
        posted.phases.clear()
        t0 = time.perf_counter()
        player.seek_to(target)
        while not (abs(player.clock_s() - min(target, player.duration_s)) < 1e-9
                   and posted.event.is_set()):
            time.sleep(0.002)
        console = time.perf_counter() - t0
        while not posted.phases.is_set() or player.catching_up:
            time.sleep(0.002)
        out.append((target, console, time.perf_counter() - t0))
    stop.set()
    player.stop()
    worker.join(5)
    return scan_s, out


def fed_from_start(path: Path, target_s: float) -> float:
    """Seconds to feed a capture from the first byte to `target_s` (a seek back, before)."""
    from bootlab.session.replay import open_replay

    player = open_replay(path).player
    capture = Capture(player.profile)
    t0 = time.perf_counter()
    for t_ns, data in player.chunks:
        if t_ns / 1e9 > target_s:
            break
        capture.feed(data, t_ns)
    return time.perf_counter() - t0


def peak_rss_mb(argv: list[str]) -> tuple[float, float]:
    """(wall s, peak RSS MB) of a command, through the launcher."""
    result = cli(argv, 1)
    return result["wall_s"], result["maxrss_kb"] / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--rate", type=int, default=100_000, help="bytes/s (default 100,000)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    opts = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bootlab-bench-long-"))
    figures: dict[str, Any] = {}
    try:
        path = tmp / "20260101-000000-soak-01.jsonl"
        t0 = time.perf_counter()
        received = make_session(path, opts.minutes, opts.rate)
        size = path.stat().st_size
        print(f"generated {opts.minutes:g} min at {opts.rate:,} B/s: {received / 1e6:.0f} MB "
              f"received, file {size / 1e6:.0f} MB, in {time.perf_counter() - t0:.0f} s [{tmp}]")
        duration = opts.minutes * 60

        written = index_path(path).exists()
        recorded = first_screen(path) if written else float("nan")
        t0 = time.perf_counter()
        session_index(path)
        cached = time.perf_counter() - t0
        index_path(path).unlink(missing_ok=True)
        t0 = time.perf_counter()
        index = session_index(path, cache=True)
        built = time.perf_counter() - t0
        print(f"index: {len(index):,} records; written by the session writer at close: "
              f"{'yes' if written else 'NO'}; read back in {cached:.3f} s; built by a pass "
              f"over the file in {built:.2f} s ({index_path(path).stat().st_size / 1e6:.1f} "
              "MB beside it)")

        ref_wall, ref_rss = peak_rss_mb([sys.executable, "-c", _LOAD, str(path)])
        index_path(path).unlink()
        cold = first_screen(path)
        warm = first_screen(path)
        print(f"\n{'measure':<52} {'figure':>10} {'target':>10} {'reference':>12}  ratio")
        print(f"{'first screen of the recording (writer kept index) (s)':<52} {recorded:10.2f} "
              f"{TARGET_OPEN_S:10.2f} {ref_wall:12.2f}  {recorded / ref_wall:.2f}x  "
              "(reference: load_session whole)")
        print(f"{'first screen, no index (older or crashed) (s)':<52} {cold:10.2f} "
              f"{TARGET_OPEN_S:10.2f} {ref_wall:12.2f}  {cold / ref_wall:.2f}x")
        print(f"{'first screen, index built by that open (s)':<52} {warm:10.2f} "
              f"{TARGET_OPEN_S:10.2f} {ref_wall:12.2f}  {warm / ref_wall:.2f}x")
        figures.update(first_screen_recorded_s=recorded, first_screen_cold_s=cold,
                       first_screen_warm_s=warm, load_whole_s=ref_wall,
                       load_whole_rss_mb=ref_rss)

        early = [duration - 1, duration / 2, 5.0]
        _, done = seeks(path, early, wait_scan=False)
        for target, took, phases in done:
            print(f"{f'seek to {target:,.0f} s on opening, scan running (s)':<52} {took:10.3f} "
                  f"{TARGET_SEEK_S:10.2f}  (phases there after {phases:.3f} s)")
            figures.setdefault("early_seeks", []).append((target, took, phases))
        plan = [60.0, 30.0, 5.0, 55.0, 2 * duration / 3, duration / 2, duration - 1,
                duration / 4]
        scan_s, done = seeks(path, [min(t, duration) for t in plan])
        print(f"{'scan ahead of playback done after (s)':<52} {scan_s:10.2f}")
        figures["scan_ahead_s"] = scan_s
        for target, took, _ in done:
            reference = fed_from_start(path, target) if took < 60 else float("nan")
            print(f"{f'seek to {target:,.0f} s (s)':<52} {took:10.3f} {TARGET_SEEK_S:10.2f} "
                  f"{reference:12.3f}  {took / reference:.2f}x  (reference: fed from the start)")
            figures.setdefault("seeks", []).append((target, took, reference))

        cmd = bootlab_cmd()
        for name, argv_ in (("analyze", [*cmd, "analyze", str(path), "--json"]),
                            ("compare", [*cmd, "compare", str(path), str(EXAMPLE), "--json"])):
            wall, rss = peak_rss_mb(argv_)
            print(f"{f'bootlab {name} SESSION --json: peak RSS (MB)':<52} {rss:10.0f} "
                  f"{'bounded':>10} {ref_rss:12.0f}  {rss / ref_rss:.2f}x  "
                  f"(reference: load_session whole; {wall:.1f} s)")
            figures[name] = {"wall_s": wall, "rss_mb": rss}
        print(f"\nfile {size / 1e6:.0f} MB; RSS = the child's ru_maxrss through a launcher")
    finally:
        if opts.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
