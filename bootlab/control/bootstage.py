"""U-Boot's own stages of this power cycle, read at its prompt before the measured boot.

U-Boot's bootstage records when it passed each stage (`reset`, `board_init_f`, `main_loop`,
`cli_loop` ...) on its own timer, from the timer's zero. `bootstage report` prints them, but
only at the prompt bootlab stopped at, and only for the power cycle still running: so they are
read there, before `boot` is typed, and kept with the boot that `boot` starts. U-Boot's timer
is then read twice with `gettime`, `SPAN_S` apart, each read bracketed by the host times of
its command and its answer: two moments both clocks saw, which place the stages on the
session's clock and show whether U-Boot's timer keeps time (`analysis.bootstage`). A U-Boot
without `bootstage` gives nothing; one without `gettime` gives its stages on its own timer.
"""

from __future__ import annotations

import re
import time
from typing import Any

from bootlab.control.uboot import UBoot

REPORT = "bootstage report"
GETTIME = "gettime"
SPAN_S = 2.0
"""The least time between the two reads of U-Boot's timer: as long as the sync lines of dmesg
(`control.collect`), so a timer 2.6x off (a failed calibration) cannot hide."""
_REFUSED = re.compile(r"(?i)unknown command|usage:|not supported")
_TIMER = re.compile(r"Timer val:\s*(\d+)")


def _timer(uboot: UBoot) -> dict[str, int] | None:
    """One read of U-Boot's timer (ms), with the host times (CLOCK_MONOTONIC ns) its Enter
    was sent and its answer was back; None when U-Boot has no `gettime`."""
    output, sent, back = uboot.timed(GETTIME)
    found = _TIMER.search(output)
    if found is None or _REFUSED.search(output):
        return None
    return {"ms": int(found.group(1)), "sent": sent, "back": back}


def read_bootstage(uboot: UBoot) -> dict[str, Any] | str:
    """At the U-Boot prompt: its bootstage report and two reads of its timer, as the fields
    of a `collected` event (host times in CLOCK_MONOTONIC ns: `in_session` makes the reads'
    the session's); or why there is nothing to keep.

    Raises:
        UBootError: the prompt did not come back.
    """
    report = uboot.run(REPORT)
    if _REFUSED.search(report) or "Timer summary" not in report:
        return f"this U-Boot has no bootstage report (`{REPORT}` said {report.strip()[:80]!r})"
    first = _timer(uboot)
    timer = []
    if first is not None:
        time.sleep(max(0.0, SPAN_S - (time.monotonic_ns() - first["back"]) / 1e9))
        last = _timer(uboot)
        timer = [first] if last is None else [first, last]
    return {"source": "bootstage", "command": REPORT, "text": report, "timer": timer}


def in_session(reads: list[dict[str, Any]], start_ns: int) -> list[dict[str, Any]]:
    """Clock reads with their host times (`sent`, `back`) made times of the session that
    starts at `start_ns` (negative: read before it began, as at the prompt)."""
    return [{**r, "sent": r["sent"] - start_ns, "back": r["back"] - start_ns} for r in reads]
