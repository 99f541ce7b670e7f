"""What the board told about a boot after its goal (`--collect`), joined to its console table.

A session holds the board's dmesg as a `collected` event, never as console lines. Its kernel
milestones are found with the same profile, then placed on the session's host clock: by the
sync line bootlab wrote to /dev/kmsg before reading dmesg (the console gives its host time,
dmesg its printk time), else by the console's own printk times (`clocks.fit_clocks`). A
milestone the console showed on its own line stays the console's; one it did not show (`quiet`)
or only placed by a fallback rule comes from dmesg, marked as such. A dmesg that cannot be
placed adds nothing and says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from bootlab.core.analysis.clocks import ReadClock, boot_lines, unify_boot
from bootlab.core.analysis.phases import Boot, Milestone
from bootlab.core.analysis.pipeline import Analysis, analyze
from bootlab.core.capture.sources import Source

SYNC_TEXT = "bootlab sync"
"""The sync line's words: `control.collect` writes them, a nonce after, and this module looks
for them on the console and in dmesg."""
_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]")
TOLERANCE_MS = 5.0
"""How much before its printk time (on the placed clock) a console line may arrive before the
placement is taken as contradicted, beyond the placement's own uncertainty."""


@dataclass(frozen=True)
class Placement:
    """Where printk time zero falls on the session's host clock."""

    offset_s: float
    uncertainty_ms: float
    how: str
    lags_s: tuple[float, ...] = ()
    """Each kernel line the console showed: its arrival less where this placement puts its
    printk time. Never much below zero where the clocks agree (a line is shown after it is
    printed); with the sync line, the check of the whole placement."""
    rate: float | None = None
    """Host seconds per printk second the console's lines demand at least (with the sync
    line): about 1 where the board's clock keeps time."""


def collected_dmesg(events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The last dmesg a session's events hold (None: none was collected)."""
    found = [e for e in events if e.get("event") == "collected"
             and e.get("source") == "dmesg" and isinstance(e.get("text"), str)]
    return found[-1] if found else None


def _sync_in_dmesg(text: str, nonce: str) -> float | None:
    """The printk time of the sync line in dmesg."""
    for line in text.splitlines():
        if line.rstrip().endswith(f"{SYNC_TEXT} {nonce}"):
            stamp = _STAMP.match(line)
            return float(stamp.group(1)) if stamp else None
    return None


def place(source: Source, analysis: Analysis, boot: Boot,
          event: dict[str, Any]) -> tuple[Placement | None, str]:
    """Where dmesg's printk times fall on the session's clock, or None and why not."""
    clock = ReadClock.of(source)
    if clock is None:
        return None, "the session has no host times"
    if not any(_STAMP.match(line) for line in event["text"].splitlines()):
        return None, "dmesg has no printk times (printk.time off, or a dmesg that omits them)"
    lines = boot_lines(source, analysis, boot)
    timeline = unify_boot(source, boot, lines, clock)
    nonce = str(event.get("sync") or "")
    kernel_s = _sync_in_dmesg(event["text"], nonce) if nonce else None
    seen = [ln for ln in lines if nonce and ln.message.rstrip().endswith(f"{SYNC_TEXT} {nonce}")
            and "printf" not in ln.message]
    host_s = seen[0].host_s if seen else None
    if kernel_s is not None and host_s is not None:
        # Written while the board was idle: nothing queued before it, its arrival is when
        # it was printed, however far behind the console was during the boot.
        line = seen[0]
        uncertainty_ms = clock.granularity_ms(line.offset) + timeline.latency_ms
        shown = [(ln.host_s, ln.kernel_s) for ln in lines if ln is not line
                 and ln.host_s is not None and ln.kernel_s is not None]
        earlier = [(host_s - h) / (kernel_s - k) for h, k in shown if kernel_s - k > 1.0]
        return (Placement(host_s - kernel_s, uncertainty_ms,
                          f"the sync line (console line {line.number} at {host_s:.3f} s, "
                          f"printk {kernel_s:.6f})",
                          tuple(h - (host_s - kernel_s + k) for h, k in shown),
                          max(earlier) if earlier else None), "")
    fit = timeline.fit
    if fit is not None and fit.live:
        return (Placement(fit.offset_s, fit.uncertainty_ms,
                          f"the console's printk times ({fit.live} lines)"), "")
    if kernel_s is None:
        return None, "dmesg lost its sync line (the ring buffer overflowed, or was cleared)"
    return None, ("the console showed neither the sync line (the console loglevel hides "
                  "error messages) nor printk times")


def add_collected(analysis: Analysis, source: Source) -> None:
    """Join a session's collected dmesg to the boot it was read after (the last one)."""
    event = collected_dmesg(source.session.events if source.session is not None else ())
    if event is None or not analysis.boots:
        return
    boot = analysis.boots[-1]
    if boot.partial or boot.gap is not None:
        boot.collected = "dmesg was collected, but this boot is not whole: not joined"
        return
    placement, why = place(source, analysis, boot, event)
    if placement is None:
        boot.collected = f"dmesg was collected but cannot be placed on this session's clock: {why}"
        return
    found = analyze(event["text"].encode("utf-8", errors="replace"), analysis.profile)
    lags = placement.lags_s
    if lags and min(lags) < -(placement.uncertainty_ms + TOLERANCE_MS) / 1000:
        pace = "" if placement.rate is None else \
            f" (it ran at about {1 / placement.rate:.2f}x the host's pace)"
        boot.collected = (
            f"dmesg was collected but not joined: {len(lags)} kernel lines reached the console "
            f"up to {-min(lags):.3f} s before the times dmesg gives them on this clock, placed "
            f"by {placement.how}: the board's printk clock does not keep the host's time"
            f"{pace}, as on an emulator or with a clock that stops; joining would misplace "
            "its milestones")
        return
    console = {m.id: m for m in boot.milestones if not m.fallback}
    taken: list[Milestone] = []
    for milestone in (m for b in found.boots for m in b.milestones):
        if milestone.id in console or milestone.fallback or milestone.kernel_s is None \
                or any(m.id == milestone.id for m in taken):
            continue
        taken.append(replace(milestone, host_s=placement.offset_s + milestone.kernel_s,
                             boot=boot.index, source="dmesg", offset=boot.first_offset))
    ids = {m.id for m in taken}
    kept = [m for m in boot.milestones if m.id not in ids]
    boot.milestones = sorted(kept + taken, key=lambda m: float("inf") if m.host_s is None
                             else m.host_s)
    checked = (f"; checked on the {len(lags)} kernel lines the console showed: they came "
               f"{min(lags) * 1000:+.1f} to {max(lags) * 1000:+.1f} ms after the times dmesg "
               "gives them") if lags else \
        ("; not checked: the console showed no kernel line with a printk time, so the "
         "board's clock is taken to keep the host's time" if placement.how.startswith(
             "the sync") else "")
    boot.collected = (f"dmesg collected after the goal: {len(taken)} milestones the console "
                      "did not show (marked dmesg, their line dmesg's), placed by "
                      f"{placement.how} ±{placement.uncertainty_ms:.1f} ms{checked}")
