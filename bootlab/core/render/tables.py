"""The phase table of an analysis as data (JSON), text, CSV and Markdown.

JSON shape (what `bootlab analyze --json` prints):
`{"source": {...}, "profile": name, "lines": n, "reference": ..., "clock": "host"|"kernel",
  "boots": [{"index", "first_line", "failed", "partial", "before_first_milestone",
             "zero": {"what", "host_s"} | null, "zero_unknown"}],
  "milestones": [{"id", "title", "line", "text", "host_s", "kernel_s", "boot_s", "boot",
                  "elapsed_s", "delta_s", "values", "fallback"}],
  "phases": [{"boot", "from", "to", "start_s", "end_s", "duration_s"}]}`
`line` is 1-based in the input, counted on "\\n"; times are seconds and may be null. A boot
counted from its time zero (`analysis.timezero`) has a first milestone `zero` (source
"bootlab", line null) at 0, so its first phase is the one before the first byte.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from bootlab.core.analysis.journal_goal import SOURCE as JOURNAL_SOURCE
from bootlab.core.analysis.phases import (
    ZERO_SOURCE,
    Boot,
    Milestone,
    PhaseRow,
    choose_clock,
    silent_start,
    table_rows,
)
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.analysis.ready import SOURCE as READY_SOURCE
from bootlab.core.render.bootloader_stages import stage_lines, stage_records
from bootlab.core.render.userspace import chain_record, unit_lines, unit_records

ASKED = (READY_SOURCE, JOURNAL_SOURCE)
"""Sources of goals asked at the board's shell after login: their ids name them."""
NO_LINE = (ZERO_SOURCE, *ASKED)
"""Sources of milestones no line shows."""


def _r(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def boot_rows(analysis: Analysis,
              reference: str | None = None) -> list[tuple[Boot, list[PhaseRow]]]:
    """Each boot with its table's rows, measured from `reference` (default: the profile's):
    from its time zero, with that row first, when the boot has one (`phases.table_rows`)."""
    ref = reference or analysis.profile.reference
    return [(boot, table_rows(boot, ref)) for boot in analysis.boots]


def to_json(analysis: Analysis, source: dict[str, Any] | None = None,
            reference: str | None = None) -> dict[str, Any]:
    """The analysis as a JSON-ready dict (see the module docstring)."""
    milestones: list[dict[str, Any]] = []
    phases: list[dict[str, Any]] = []
    clocks = set()
    for boot, rows in boot_rows(analysis, reference):
        clock = choose_clock(boot)
        clocks.add(clock)
        for i, row in enumerate(rows):
            m = row.milestone
            milestones.append({
                "id": m.id, "title": m.title,
                "line": None if m.source in NO_LINE else m.line,
                "text": m.text,
                "host_s": _r(m.host_s), "kernel_s": _r(m.kernel_s), "boot_s": _r(m.boot_s),
                "boot": boot.index, "elapsed_s": _r(row.elapsed_s), "delta_s": _r(row.delta_s),
                "values": m.values, "fallback": m.fallback, "source": m.source,
                "uncertainty_ms": m.uncertainty_ms,
            })
            if i + 1 < len(rows):
                nxt = rows[i + 1].milestone
                phases.append({
                    "boot": boot.index, "from": m.id, "to": nxt.id,
                    "start_s": _r(row.elapsed_s), "end_s": _r(rows[i + 1].elapsed_s),
                    "duration_s": _r(row.duration_s),
                })
    return {
        "source": source or {},
        "profile": analysis.profile.name,
        "lines": analysis.lines,
        "reference": reference or analysis.profile.reference,
        "clock": clocks.pop() if len(clocks) == 1 else ("mixed" if clocks else None),
        "boots": [{"index": b.index, "first_line": b.first_line, "failed": b.failed,
                   "partial": b.partial, "before_first_milestone": silent_start(b),
                   "incomplete": b.incomplete, "collected": b.collected, "ready": b.ready,
                   "zero": None if b.zero is None else {"what": b.zero.what,
                                                        "host_s": _r(b.zero.at_s)},
                   "zero_unknown": b.zero_unknown,
                   "apart": [{"id": m.id, "source": m.source, "line": m.line,
                              "board_s": m.kernel_s} for m in b.apart],
                   "units": unit_records(b, rows), "bootstage": stage_records(b, rows),
                   "systemd": chain_record(b, rows)}
                  for b, rows in boot_rows(analysis, reference)],
        "milestones": milestones,
        "phases": phases,
        "notices": analysis.notices,
    }


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""How a cell a spreadsheet would run as a formula starts."""


def sheet_text(text: str) -> str:
    """Device or user text a spreadsheet will not run as a formula (a leading ' keeps it
    text)."""
    return "'" + text if text.startswith(_FORMULA) else text


HEADER = ("boot", "milestone", "line", "elapsed_s", "delta_s", "duration_s", "kernel_s", "text")


def shown_name(milestone: Milestone) -> str:
    """A milestone's name in a table: marked when a fallback placed it, or another source
    than the console showed it (a collected dmesg)."""
    if milestone.source == "console":
        return milestone.id + (" (fallback)" if milestone.fallback else "")
    bound = "" if milestone.uncertainty_ms is None else f" ±{milestone.uncertainty_ms:.1f} ms"
    if milestone.source in ASKED:  # its id names its source already
        return f"{milestone.id} ({bound.strip()})" if bound else milestone.id
    return f"{milestone.id} ({milestone.source}{bound})"


def apart_lines(boot: Boot) -> list[str]:
    """The milestones a boot's collected dmesg holds that could not be placed on the session's
    clock, each on the board's own clock: shown apart, never in the table's columns."""
    if not boot.apart:
        return []
    out = [f"boot {boot.index}: on the board's own clock only (its printk time, not the "
           "session's):"]
    out += [f"  {m.id:<16} {m.kernel_s if m.kernel_s is not None else float('nan'):>10.6f}"
            f"  {shown_line(m)}  {m.text.strip()[:60]}" for m in boot.apart]
    return out


def shown_line(milestone: Milestone) -> str:
    """Its line in a table: the console's number, `dmesg:N` for a collected dmesg's, `-` for
    time zero (bootlab's own stamp, no line)."""
    if milestone.source in NO_LINE:
        return "-"
    return str(milestone.line) if milestone.source == "console" else \
        f"{milestone.source}:{milestone.line}"


def _records(analysis: Analysis, reference: str | None) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for boot, rows in boot_rows(analysis, reference):
        for row in rows:
            m = row.milestone
            out.append((str(boot.index), shown_name(m), shown_line(m), _fmt(row.elapsed_s),
                        _fmt(row.delta_s, signed=True), _fmt(row.duration_s),
                        _fmt(m.kernel_s), m.text.strip()))
    return out


def _sheet_records(analysis: Analysis, reference: str | None) -> list[tuple[str, ...]]:
    return [(*r[:-1], sheet_text(r[-1])) for r in _records(analysis, reference)]


NAME_ROOM = 40
"""The widest milestone name a text table shows whole (a `ready:` goal's command can be
long); CSV and JSON keep every name whole."""


def _fit(text: str, room: int) -> str:
    """`text`, cut to `room` characters with an ellipsis in its middle when longer (the end
    of a name says which: `(dmesg ±3.2 ms)`, the command's last word)."""
    if len(text) <= room:
        return text
    keep = room - 1
    return text[: keep - keep // 2] + "…" + text[len(text) - keep // 2:]


def to_text(analysis: Analysis, reference: str | None = None, width: int = 100) -> str:
    """A fixed-width phase table for a terminal (text already cleaned of escapes)."""
    records = [(r[0], _fit(r[1], NAME_ROOM), *r[2:]) for r in _records(analysis, reference)]
    if not records:
        return "no milestones found\n"
    heads = ("boot", "milestone", "line", "elapsed", "delta", "duration", "kernel", "text")
    widths = [max(len(h), *(len(r[i]) for r in records)) for i, h in enumerate(heads[:-1])]
    room = max(20, width - sum(widths) - 2 * len(widths))
    lines = ["  ".join(h.rjust(w) if i >= 2 else h.ljust(w)
                       for i, (h, w) in enumerate(zip(heads, widths, strict=False))) + "  text"]
    for r in records:
        cells = [c.rjust(w) if i >= 2 else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=False))]
        text = r[-1] if len(r[-1]) <= room else r[-1][: room - 1] + "…"
        lines.append("  ".join(cells) + "  " + text)
    shown_rows = {boot.index: rows for boot, rows in boot_rows(analysis, reference)}
    for boot in analysis.boots:
        note = boot.incomplete or silent_start(boot)
        if boot.partial:
            note = (f"lines {boot.first_line}-: the end of a boot that began before the "
                    "capture (no timeline)")
        if note:
            lines.append(f"boot {boot.index}: {note}")
        if boot.collected:
            lines.append(f"boot {boot.index}: {boot.collected}")
        if boot.ready:
            lines.append(f"boot {boot.index}: {boot.ready}")
        lines.extend(apart_lines(boot))
        lines.extend(stage_lines(boot, shown_rows.get(boot.index, [])))
        lines.extend(unit_lines(boot, shown_rows.get(boot.index, [])))
    lines += zero_notes(analysis.boots, reference or analysis.profile.reference)
    return "\n".join(lines) + "\n"


def zero_notes(boots: list[Boot], reference: str) -> list[str]:
    """Where a first-byte table starts and why: the boots counted from their first byte, as
    their time zero is not known (one line per reason; a silent firmware's note says it)."""
    if reference != "first-byte":
        return []
    why: dict[str, list[int]] = {}
    for boot in boots:
        said = silent_start(boot) or ""
        if boot.zero is None and boot.zero_unknown and boot.milestones and not boot.partial \
                and boot.zero_unknown not in said:
            why.setdefault(boot.zero_unknown, []).append(boot.index)
    return [f"{_boots(indexes)}: elapsed from the first byte, time zero not known: {reason}"
            for reason, indexes in why.items()]


def _boots(indexes: list[int]) -> str:
    """`boot 2`, `boots 1-4`, `boots 1, 3`."""
    if len(indexes) == 1:
        return f"boot {indexes[0]}"
    if indexes == list(range(indexes[0], indexes[-1] + 1)):
        return f"boots {indexes[0]}-{indexes[-1]}"
    return "boots " + ", ".join(map(str, indexes))


def to_csv(analysis: Analysis, reference: str | None = None) -> str:
    """The phase table as CSV (seconds, '-' where unknown)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(_sheet_records(analysis, reference))
    return buffer.getvalue()


def to_markdown(analysis: Analysis, reference: str | None = None) -> str:
    """The phase table as a Markdown table."""
    rows = _records(analysis, reference)
    out = ["| " + " | ".join(HEADER) + " |",
           "|" + "|".join(["---"] * 2 + ["---:"] * 5 + ["---"]) + "|"]
    for r in rows:
        cells = [c.replace("|", "\\|").replace("`", "'") for c in r]
        cells[-1] = f"`{cells[-1]}`" if cells[-1] else ""
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"
