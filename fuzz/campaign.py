"""Run every fuzz harness (or those named) for a while and print how many inputs each tried.

    .venv/bin/python fuzz/campaign.py --seconds 300            # all harnesses, 5 min each
    .venv/bin/python fuzz/campaign.py --runs 20000 lines stamps  # a fixed number of inputs

Each harness starts from its seeds (`fuzz/seeds/NAME/`) and a scratch corpus; a crash is kept
as `crash-*` in the current folder, with the input that caused it, and the run fails.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESSES = ("lines", "stamps", "session", "sources", "config")
_DONE = re.compile(rb"Done (\d+) runs in (\d+) second")


@dataclass(frozen=True)
class Result:
    """One harness run."""

    name: str
    runs: int
    seconds: float
    ok: bool
    output: str


def run(name: str, runs: int | None = None, seconds: int | None = None,
        max_len: int = 4096, timeout_s: float | None = None,
        crashes: Path | None = None) -> Result:
    """Fuzz one harness in a subprocess for `runs` inputs or `seconds`; a crashing input is
    written to `crashes` (as crash-NAME-HASH)."""
    options = [f"-max_len={max_len}", "-rss_limit_mb=2048", "-timeout=10",
               f"-artifact_prefix={crashes or Path.cwd()}/crash-{name}-"]
    if runs is not None:
        options.append(f"-runs={runs}")
    if seconds is not None:
        options.append(f"-max_total_time={seconds}")
    with tempfile.TemporaryDirectory(prefix=f"bootlab-fuzz-{name}-") as corpus:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(HERE / f"fuzz_{name}.py"), *options, corpus,
             str(HERE / "seeds" / name)],
            capture_output=True, timeout=timeout_s, check=False)
        elapsed = time.monotonic() - started
    output = done.stdout + done.stderr
    found = _DONE.search(output)
    count = int(found.group(1)) if found else 0
    return Result(name, count, elapsed, done.returncode == 0 and found is not None,
                  output.decode("utf-8", "replace"))


def main() -> int:
    """Run the harnesses named (default: all) and print a table of inputs tried."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"harnesses to run (default: all of {', '.join(HARNESSES)})")
    parser.add_argument("--seconds", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None)
    args = parser.parse_args()
    if args.seconds is None and args.runs is None:
        args.seconds = 60
    unknown = sorted(set(args.names) - set(HARNESSES))
    if unknown:
        parser.error(f"unknown harness(es): {', '.join(unknown)}")
    failed = 0
    print(f"{'harness':10} {'inputs':>12} {'seconds':>8} {'per s':>8}  result")
    for name in args.names or HARNESSES:
        result = run(name, args.runs, args.seconds)
        rate = result.runs / result.seconds if result.seconds else 0.0
        print(f"{name:10} {result.runs:12,} {result.seconds:8.1f} {rate:8.0f}  "
              f"{'ok' if result.ok else 'FAILED'}", flush=True)
        if not result.ok:
            failed += 1
            print(result.output[-4000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
