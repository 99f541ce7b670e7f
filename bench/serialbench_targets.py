"""bootlab record's unpaced-flood figures beside issue 15's targets and the reference's.

    .venv/bin/python bench/serialbench_targets.py bench/results/<run>/runs.jsonl

Reads serialbench's runs.jsonl (run_serialbench.sh calls this at the end) and prints, for the
unpaced flood, the median over runs of each recorder's lines/s, p99 stamp error and intact
share, bootlab's ratio to the reference reader measured in the same run, and whether the
target is met: at least 200,000 lines/s and half the reference's, p99 at most 3 ms, 100 %
intact. With `bootlab-echo` runs (`record` as typed, echoing every line to stdout), also what
echoing costs: its lines/s at least ECHO_SHARE of `record -q`'s (issue 26: echoing should
cost little; it ran at 0.37 of -q before the echo was written per read).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

LINES_S = 200_000
SHARE_OF_REFERENCE = 0.5
P99_MS = 3.0
ECHO_SHARE = 0.8


def flood_runs(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Unpaced flood runs by recorder."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for row in path.read_text().splitlines():
        run = json.loads(row)
        if run.get("script") == "flood" and not run.get("pace_baud") and run.get("ok"):
            runs.setdefault(run["recorder"], []).append(run)
    return runs


def median(runs: list[dict[str, Any]], field: str, sub: str | None = None) -> float:
    return statistics.median(r[field][sub] if sub else r[field] for r in runs)


def report(path: Path) -> str:
    runs = flood_runs(path)
    if "bootlab" not in runs or "reference" not in runs:
        return "serialbench_targets: no unpaced flood runs of both bootlab and reference"
    ours, ref = runs["bootlab"], runs["reference"]
    rate, ref_rate = median(ours, "lines_s"), median(ref, "lines_s")
    p99, ref_p99 = median(ours, "err_ms", "p99"), median(ref, "err_ms", "p99")
    intact, ref_intact = median(ours, "intact_pct"), median(ref, "intact_pct")
    rows = [
        ("lines/s", f"{rate:,.0f}", f"{ref_rate:,.0f}", f"{rate / ref_rate:.2f}",
         f">= {LINES_S:,} and >= {SHARE_OF_REFERENCE}x ref",
         rate >= LINES_S and rate >= SHARE_OF_REFERENCE * ref_rate),
        ("p99 stamp error ms", f"{p99:.2f}", f"{ref_p99:.2f}", f"{p99 / ref_p99:.2f}",
         f"<= {P99_MS:g}", p99 <= P99_MS),
        ("intact %", f"{intact:.1f}", f"{ref_intact:.1f}", "-", "100", intact == 100.0),
    ]
    if "bootlab-echo" in runs:
        echo = median(runs["bootlab-echo"], "lines_s")
        rows.append(("lines/s echoing (record as typed)", f"{echo:,.0f}", f"{ref_rate:,.0f}",
                     f"{echo / rate:.2f} of -q", f">= {ECHO_SHARE}x record -q",
                     echo >= ECHO_SHARE * rate))
    header = ("unpaced flood", "bootlab", "reference", "ratio", "target", "met")
    table = [header, *((*row[:5], "yes" if row[5] else "NO") for row in rows)]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
             for row in table]
    lines.append(f"runs: bootlab {len(ours)}, reference {len(ref)} (medians over runs); "
                 f"background CPU up to {max(r.get('bg_cpu_pct') or 0 for r in ours + ref)} %")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1])))
