"""U-Boot's own stages (bootstage) under a boot's table, and in its JSON (`analysis.bootstage`).

The stages come before the prompt at which bootlab typed `boot`, so on the table's axis they
are negative: the text gives each mark on U-Boot's timer and the step from the one before,
and where the timer was checked, when U-Boot's timer zero was on the table's axis.
"""

from __future__ import annotations

from typing import Any

from bootlab.core.analysis.bootstage import Bootstage
from bootlab.core.analysis.phases import Boot, PhaseRow, axis_zero

PROMPT_STAGE = "cli_loop"
"""U-Boot's mark as its command line starts: marks after it come from commands typed at the
prompt (bootlab's own), not from the boot."""


def _on_axis(stages: Bootstage, zero: float | None) -> list[float | None]:
    return [None if s.host_s is None or zero is None else round(s.host_s - zero, 6)
            for s in stages.stages]


def stage_records(boot: Boot, rows: list[PhaseRow]) -> dict[str, Any] | None:
    """A boot's bootstage for JSON: each mark on U-Boot's timer, and on the table's axis when
    placed, with the note that says how (None: no bootstage was read)."""
    stages = boot.bootstage
    if stages is None:
        return None
    at = _on_axis(stages, axis_zero(rows))
    return {"note": stages.note, "placed": stages.placed,
            "stages": [{"stage": s.name, "mark_s": s.mark_s, "at_s": a,
                        "uncertainty_ms": s.uncertainty_ms}
                       for s, a in zip(stages.stages, at, strict=True)],
            "accumulated": [{"stage": name, "s": spent} for name, spent in stages.accumulated]}


def stage_lines(boot: Boot, rows: list[PhaseRow]) -> list[str]:
    """The text under a boot's table: U-Boot's stages, step by step."""
    stages = boot.bootstage
    if stages is None:
        return []
    out = [f"boot {boot.index}: U-Boot's stages (bootstage, {stages.where}; {stages.note}):"]
    width = max(len(s.name) for s in stages.stages)
    out.append(f"  {'stage':<{width}}  {'timer':>8}  {'step':>8}")
    before = None
    prompt = False
    for stage in stages.stages:
        step = "-" if before is None else f"{stage.mark_s - before:+.3f}"
        after = "  (at the prompt: what was typed there)" if prompt else ""
        out.append(f"  {stage.name:<{width}}  {stage.mark_s:8.3f}  {step:>8}{after}")
        before = stage.mark_s
        prompt = prompt or stage.name == PROMPT_STAGE
    out += [f"  {name:<{width}}  {'':>8}  {spent:8.3f} in all" for name, spent
            in stages.accumulated]
    zero = axis_zero(rows)
    first = stages.stages[0]
    if stages.placed and zero is not None and first.host_s is not None:
        out.append(f"  U-Boot's timer zero (its `{first.name}` record) was "
                   f"{zero - first.host_s:.3f} s (±{first.uncertainty_ms or 0.0:.1f} ms) before "
                   "this table's zero: its power-on, unless a reset since restarted the timer "
                   "(a warm reset may not)")
    return out


def stage_summary(boot: Boot) -> str | None:
    """U-Boot's stages in one sentence, for a note under the app's panes (None: none read)."""
    stages = boot.bootstage
    if stages is None:
        return None
    steps = ", ".join(f"{b.name} +{b.mark_s - a.mark_s:.3f}"
                      for a, b in zip(stages.stages, stages.stages[1:], strict=False))
    return f"U-Boot's stages (bootstage, s on its timer): {steps}; {stages.note}"
