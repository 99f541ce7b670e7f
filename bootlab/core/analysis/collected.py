"""What the board told about a boot after its goal (`--collect`), joined to its console table.

A session holds the board's dmesg as a `collected` event, never as console lines. Its kernel
milestones are found with the same profile, then placed on the session's host clock by the
moments the console and dmesg both saw (the sync lines bootlab wrote to /dev/kmsg, kernel lines
the console showed on an idle link), within the bounds `boardclock` gives, each with its
uncertainty. A milestone the console showed on its own line stays the console's; one it did not
show (`quiet`) or only placed by a fallback rule comes from dmesg, marked as such. One the
anchors cannot pin stays apart, on the board's own clock; a dmesg that contradicts the console
adds nothing. Each case is said in the boot's note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bootlab.core.analysis.boardclock import JOIN_LIMIT_MS, Anchor, BoardClock, judge
from bootlab.core.analysis.clocks import ReadClock, boot_lines, latency_ms
from bootlab.core.analysis.phases import Boot, Milestone, ParsedLine
from bootlab.core.analysis.pipeline import Analysis, analyze
from bootlab.core.capture.sources import Source

SYNC_TEXT = "bootlab sync"
"""The sync line's words: `control.collect` writes them, a nonce after, and this module looks
for them on the console and in dmesg."""
_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]")
CONSOLE_PATH_S = 0.005
"""How long after its printk time a line may take to leave the board on an idle console (the
console driver's path, a few ms under an emulator)."""
TOLERANCE_MS = 5.0
"""How much before its printk time (on the placed clock) a console line may arrive before the
placement is taken as contradicted, beyond the placement's own uncertainty."""


def boot_of(analysis: Analysis, event: dict[str, Any]) -> Boot | None:
    """The boot a collected event was read after: the last one begun by the event's time (a
    board that restarted after it, or a setup dialogue recorded in the same file, adds boots
    after it that it says nothing of). None: the analysis has no boot."""
    t_ns = event.get("t")
    at = t_ns / 1e9 if isinstance(t_ns, int) else float("inf")
    begun = [b for b in analysis.boots
             if b.start_host_s is None or b.start_host_s <= at]
    return begun[-1] if begun else (analysis.boots[0] if analysis.boots else None)


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


def anchors(source: Source, analysis: Analysis, boot: Boot,
            event: dict[str, Any]) -> tuple[list[Anchor], list[ParsedLine]] | str:
    """The moments the console and dmesg both saw (`boardclock`), and every kernel line the
    console showed; or why there are none."""
    clock = ReadClock.of(source)
    if clock is None:
        return "the session has no host times"
    if not any(_STAMP.match(line) for line in event["text"].splitlines()):
        return "dmesg has no printk times (printk.time off, or a dmesg that omits them)"
    lines = boot_lines(source, analysis, boot)
    latency_s = latency_ms(source) / 1000.0
    found: list[Anchor] = []
    syncs = [str(event[key]) for key in ("sync", "sync_end") if event.get(key)]
    logged = event["text"] + "\n" + str(event.get("sync_end_line") or "")
    for nonce in syncs:
        kernel_s = _sync_in_dmesg(logged, nonce)
        seen = [ln for ln in lines if ln.message.rstrip().endswith(f"{SYNC_TEXT} {nonce}")
                and "printf" not in ln.message and ln.host_s is not None]
        if kernel_s is not None and seen:
            # Written while the board was idle: nothing queued before it.
            line = seen[0]
            assert line.host_s is not None
            found.append(Anchor(kernel_s, line.host_s, clock.granularity_ms(line.offset) / 1000.0
                                + latency_s + CONSOLE_PATH_S,
                                f"the sync line (console line {line.number})"))
    shown = [ln for ln in lines if ln.kernel_s is not None and ln.host_s is not None
             and SYNC_TEXT not in ln.message]
    for line in shown:
        if clock.after_idle(line.offset, source.data):
            assert line.kernel_s is not None and line.host_s is not None
            found.append(Anchor(line.kernel_s, line.host_s, clock.granularity_ms(line.offset)
                                / 1000.0 + latency_s + CONSOLE_PATH_S,
                                f"console line {line.number}"))
    if not found:
        if syncs and all(_sync_in_dmesg(logged, n) is None for n in syncs):
            return "dmesg lost its sync line (the ring buffer overflowed, or was cleared)"
        return ("the console showed neither the sync line (the console loglevel hides error "
                "messages) nor a kernel line on an idle link")
    return found, shown


def _early(clock: BoardClock, shown: Sequence[ParsedLine]) -> str | None:
    """Kernel lines the console showed before the board's clock, so placed, says they were
    printed: the placement is contradicted (in words), else None."""
    early = []
    for line in shown:
        assert line.kernel_s is not None and line.host_s is not None
        bounds = clock.bounds(line.kernel_s)
        if bounds is not None and line.host_s < bounds[0] - TOLERANCE_MS / 1000:
            early.append(bounds[0] - line.host_s)
    if not early:
        return None
    return (f"{len(early)} kernel lines reached the console up to {max(early):.3f} s before "
            "the times dmesg gives them")


def add_collected(analysis: Analysis, source: Source) -> None:
    """Join a session's collected dmesg to the boot it was read after (the last one)."""
    event = collected_dmesg(source.session.events if source.session is not None else ())
    boot = None if event is None else boot_of(analysis, event)
    if event is None or boot is None:
        return
    if boot.partial or boot.gap is not None:
        boot.collected = "dmesg was collected, but this boot is not whole: not joined"
        return
    found = anchors(source, analysis, boot, event)
    if isinstance(found, str):
        boot.collected = ("dmesg was collected but cannot be placed on this session's clock: "
                          f"{found}")
        return
    clock = judge(found[0], event["text"])
    wrong = _early(clock, found[1])
    console = {m.id: m for m in boot.milestones if not m.fallback}
    taken: list[Milestone] = []
    apart: list[Milestone] = []
    dmesg = analyze(event["text"].encode("utf-8", errors="replace"), analysis.profile)
    for milestone in (m for b in dmesg.boots for m in b.milestones):
        if milestone.id in console or milestone.fallback or milestone.kernel_s is None \
                or any(m.id == milestone.id for m in taken + apart):
            continue
        placed = None if wrong is not None else clock.place(milestone.kernel_s)
        moved = replace(milestone, boot=boot.index, source="dmesg", offset=boot.first_offset,
                        host_s=None if placed is None else placed[0],
                        uncertainty_ms=None if placed is None else placed[1])
        (apart if placed is None else taken).append(moved)
    ids = {m.id for m in taken}
    kept = [m for m in boot.milestones if m.id not in ids]
    boot.milestones = sorted(kept + taken, key=lambda m: float("inf") if m.host_s is None
                             else m.host_s)
    boot.apart = apart
    if wrong is not None:
        held = (f"; its {len(apart)} milestones the console did not show stay on the board's "
                "own clock") if apart else ""
        boot.collected = (f"dmesg was collected but not joined: {wrong}: the board's printk "
                          "clock does not keep the host's time, as on an emulator or with a "
                          f"clock that stops; joining would misplace its milestones{held}")
        return
    if not taken and not apart:
        boot.collected = ("dmesg collected after the goal: the console showed every milestone "
                          f"it holds ({clock.why})")
        return
    how = (f"placed within ±{max(m.uncertainty_ms or 0.0 for m in taken):.1f} ms by "
           f"{len(clock.anchors)} moments the console and dmesg both saw" if taken else
           "none could be placed")
    pin = "" if not clock.bounded else \
        f", which the moments seen on both do not pin within ±{JOIN_LIMIT_MS:.0f} ms"
    left = f"; {len(apart)} stay on the board's own clock{pin}" if apart else ""
    boot.collected = (f"dmesg collected after the goal: {len(taken)} milestones the console "
                      f"did not show (marked dmesg, their line dmesg's), {how} ({clock.why})"
                      f"{left}")
