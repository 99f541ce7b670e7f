"""Reports of recorded boots: phase tables, waterfalls, A/B statistics, initcalls, advice.

One `Report` (the analysed inputs, optionally ranked recommendations) renders as

- Markdown: tables, and text charts in fenced blocks;
- HTML: one self-contained page (inline CSS and SVG, no script, no external resource; a
  Content-Security-Policy forbids both), every piece of device text escaped;
- CSV: one row per session and milestone;
- JSON: everything as data (`{"format": "bootlab-report", "version": 1, ...}`).

Waterfalls share one time axis across sessions, so bars compare at a glance. Sessions sharing a
label are grouped for the A/B statistics (`compare`) and the initcall differences; the first
group is the base. Recommendations are duck-typed (`title`, `predicted_ms`, `evidence`), so
any advice engine's ranked list can be shown. A recommendation whose variant the inputs hold
(a group labelled with its name, as `bootlab ab` labels a variant's boots) shows that group's
measured saving against the base; when the measured interval excludes the prediction, the
measurement is the headline and the report says why the prediction missed.

Here: the report's inputs and their layout in each format. A recommendation as data, what the
inputs measured of it and its headline are `recommendations`; the Markdown escaping and the
HTML page's style and tables, shared with `tune_report`, are `markup`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from itertools import pairwise
from typing import Any

from bootlab import __version__
from bootlab.core.analysis import compare, initcalls
from bootlab.core.analysis.initcalls import Change, Initcall
from bootlab.core.analysis.phases import Boot, PhaseRow, table_rows
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.analysis.profiles import STAGES
from bootlab.core.capture.text import clean
from bootlab.core.render import bootgraph, tables
from bootlab.core.render.bootloader_stages import stage_lines
from bootlab.core.render.formats import FORMATS
from bootlab.core.render.markup import CSP, CSS, fenced, html_table, legend, md, md_code
from bootlab.core.render.recommendations import Measured, headline, recommendation_json
from bootlab.core.render.svg import Bar, escape, svg_chart, text_chart
from bootlab.core.render.userspace import unit_lines, unit_spans

TEXT_WIDTH = 100
"""Line length of the text charts in Markdown."""


@dataclass
class Part:
    """One input of the report: a session or log, analysed."""

    name: str
    """Its file name."""
    source: dict[str, Any]
    """What `bootlab analyze --json` shows as "source" (path, kind, label, board ...)."""
    analysis: Analysis
    reference: str | None = None
    """The milestone elapsed times count from (None: the profile's)."""
    initcalls: list[Initcall] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)
    """Post-boot probe figures (`compare.probe_figures`)."""
    board: str = ""
    """The board of an A/B run spread over several (`abplan.ab_board`): its statistics are
    blocked by board."""

    @property
    def label(self) -> str:
        """The session's label, or ''."""
        return str(self.source.get("label") or "")

    @property
    def ref(self) -> str:
        """The reference in force."""
        return self.reference or self.analysis.profile.reference


@dataclass
class Report:
    """What a report shows; render it with `render`."""

    parts: list[Part]
    recommendations: Sequence[Any] = ()
    """Ranked recommendations: objects with `title`, `predicted_ms` and `evidence`."""
    top: int = 15
    """Initcalls listed and charted per session."""

    def entries(self) -> list[compare.Entry]:
        """Every boot of the inputs, as the comparison takes it."""
        return [compare.Entry(p.name, p.label, boot, p.ref,
                              p.figures if boot.index == 1 else {}, p.board)
                for p in self.parts for boot in p.analysis.boots]

    def columns(self) -> tuple[list[compare.Column], list[str]]:
        """The A/B comparison's columns (boots sharing a label grouped) and milestone ids."""
        order: dict[str, int] = {}
        for part in self.parts:
            order = {**part.analysis.profile.order, **order}
        columns = compare.build_columns(self.entries())
        return columns, compare.milestone_order(columns, order)

    def measurement(self, recommendation: Any) -> Measured | None:
        """What the inputs measured of a recommendation: the group labelled with its variant's
        name against the base (the first group), at its milestone or else the last both
        reached; None without such a group or with fewer than two boots a side."""
        variant = getattr(recommendation, "variant", None)
        columns, order = self.columns()
        if not isinstance(variant, str) or len(columns) < 2:
            return None
        name = variant.split(":", 1)[0]
        column = next((c for c in columns[1:] if c.name == name), None)
        if column is None:
            return None
        common = [m for m in order if m in column.values and m in columns[0].values
                  and compare.is_time(m)]
        wanted = getattr(recommendation, "milestone", None)
        milestone = wanted if wanted in common else (common[-1] if common else None)
        diff = None if milestone is None else column.difference(columns[0], milestone)
        return None if diff is None or milestone is None else \
            Measured(name, columns[0].name, milestone, diff)

    def subject(self) -> str:
        """The board(s) and the date(s) of the boots: `qemu-virt-a57, boots of 2026-11-30`."""
        boards = list(dict.fromkeys(clean(str(p.source["board"])) for p in self.parts
                                    if p.source.get("board")))
        days = sorted({day for p in self.parts if (day := _day(p.source.get("started_iso")))})
        board = ", ".join(boards) if boards else "board not recorded"
        if not days:
            return f"{board}, date not recorded"
        return f"{board}, boots of {days[0]}" + (f" to {days[-1]}" if len(days) > 1 else "")

    def initcall_diffs(self) -> list[tuple[str, str, list[Change]]]:
        """Initcalls of each group against the first (groups: shared labels, else files)."""
        return initcalls.diff_groups([(p.name, p.label, p.initcalls) for p in self.parts])

    def axis(self) -> tuple[float, float]:
        """The waterfalls' common time axis: from 0 (or the earliest phase, before a
        --reference milestone) to the latest elapsed time of any boot."""
        bars = [bar for part in self.parts for _, bars in waterfalls(part) for bar in bars]
        return (min([0.0, *(bar.start for bar in bars)]),
                max([bar.end for bar in bars], default=1.0))


def _day(started: Any) -> str:
    """The date of an ISO time stamp (`started_iso`), or '' when it is none."""
    try:
        return datetime.fromisoformat(started).date().isoformat() \
            if isinstance(started, str) else ""
    except ValueError:
        return ""


def _notes(part: Part) -> list[str]:
    """What a part's reader worked around, its boots with a gap (left out of the comparison,
    no total, no phase across the gap), and those timed from their first byte, and why."""
    return [*part.analysis.notices,
            *(f"boot {boot.index}: {boot.incomplete}; left out of the comparison"
              for boot in part.analysis.boots if boot.incomplete),
            *tables.zero_notes(part.analysis.boots, part.ref)]


_HANDOFF = {"starting_kernel": "kernel"}
"""Milestones after which the next stage runs: the bootloader's last words."""


def phase_stages(part: Part, rows: Sequence[PhaseRow]) -> list[str]:
    """The stage each row's phase (to the next row) is spent in: the latest of `STAGES` the
    boot has reached by the phase's start, so a later stage's milestone does not send the
    boot back (the root file system mounted once init runs is user space's time), or the next
    stage after a hand-off such as `Starting kernel`. A milestone that other stages print too
    (`shared`) proves no stage."""
    markers = part.analysis.profile.by_id
    reached = 0
    out = []
    for row in rows:
        milestone = row.milestone
        marker = markers.get(milestone.id)
        if milestone.stage in STAGES and not (marker is not None and marker.shared):
            reached = max(reached, STAGES.index(milestone.stage))
        handoff = _HANDOFF.get(milestone.id)
        out.append(STAGES[max(reached, STAGES.index(handoff))] if handoff else STAGES[reached])
    return out


def waterfalls(part: Part) -> list[tuple[Boot, list[Bar]]]:
    """Each boot's phases as bars (a phase: one milestone to the next, both times known),
    each of the kind `phase_stages` gives it; from time zero, the first is the phase before
    the first byte."""
    out = []
    for boot in part.analysis.boots:
        rows = table_rows(boot, part.ref)
        bars = [Bar(f"{a.milestone.id} → {b.milestone.id}", a.elapsed_s, b.elapsed_s, stage,
                    _ms(b.elapsed_s - a.elapsed_s))
                for (a, b), stage in zip(pairwise(rows), phase_stages(part, rows), strict=False)
                if a.elapsed_s is not None and b.elapsed_s is not None]
        out.append((boot, bars))
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _us(us: float) -> str:
    return f"{us / 1000:.1f}"


def to_json(report: Report) -> dict[str, Any]:
    """The report as data: every session's analysis and initcalls, comparison, advice."""
    columns, order = report.columns()
    sessions = []
    for part in report.parts:
        calls = part.initcalls
        sessions.append({
            "name": part.name,
            "analysis": tables.to_json(part.analysis, part.source, part.reference),
            "initcalls": {"count": len(calls), "total_us": initcalls.total_us(calls),
                          "calls": [c.to_json() for c in calls]} if calls else None,
        })
    return {
        "format": "bootlab-report", "version": 1, "bootlab": __version__,
        "sessions": sessions,
        "comparison": compare.to_json(columns, order) if len(columns) > 1 else None,
        "initcall_diffs": [{"a": a, "b": b, "changes": [c.to_json() for c in changes]}
                           for a, b, changes in report.initcall_diffs()],
        "subject": report.subject(),
        "recommendations": [recommendation_json(r, report.measurement(r))
                            for r in report.recommendations],
    }


CSV_HEADER = ("session", "label", "boot", "milestone", "title", "stage", "line", "elapsed_s",
              "delta_s", "duration_s", "kernel_s", "fallback", "text")


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


def to_csv(report: Report) -> str:
    """One row per session and milestone (seconds; empty where unknown)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for part in report.parts:
        for boot in part.analysis.boots:
            for row in table_rows(boot, part.ref):
                m = row.milestone
                writer.writerow((tables.sheet_text(part.name), tables.sheet_text(part.label),
                                 boot.index, m.id,
                                 m.title, m.stage, tables.shown_line(m), _cell(row.elapsed_s),
                                 _cell(row.delta_s), _cell(row.duration_s),
                                 _cell(m.kernel_s), int(m.fallback),
                                 tables.sheet_text(m.text.strip())))
    return buffer.getvalue()


def _md_recommendations(report: Report) -> list[str]:
    out = ["## Recommendations", ""]
    for i, rec in enumerate(report.recommendations, start=1):
        measured = report.measurement(rec)
        data = recommendation_json(rec, measured)
        saving, trust = headline(data, measured)
        out.append(f"{i}. **{md(data['title'])}**" + (f" ({md(saving)})" if saving else ""))
        if trust:
            out.append(f"   **{md(trust)}**")
        if data["detail"]:
            out.append(f"   {md(data['detail'])}")
        out += [f"   - {md_code(line)}" for line in data["evidence"]]
        if data["ab_command"]:
            out.append(f"   - measure it: {md_code(data['ab_command'])}")
    return [*out, ""]


def _md_part(report: Report, part: Part, axis: tuple[float, float]) -> list[str]:
    info = part.source
    facts = [f"{key}: {md(str(info[key]))}" for key in ("label", "board", "kind", "started_iso")
             if info.get(key)]
    out = [f"## {md(part.name)}", ""]
    if facts:
        out += ["; ".join(facts), ""]
    out += [f"- notice: {md(n)}" for n in _notes(part)]
    out += [tables.to_markdown(part.analysis, part.reference)]
    for boot, bars in waterfalls(part):
        if bars:
            title = "Timeline" + (f", boot {boot.index}" if len(part.analysis.boots) > 1 else "")
            out += [f"### {title}", "", fenced(text_chart(bars, TEXT_WIDTH, axis))]
    calls = part.initcalls
    if calls:
        out += ["### Initcalls", "",
                f"{len(calls)} initcalls and probes; initcalls total "
                f"{_us(initcalls.total_us(calls))} ms. The {min(report.top, len(calls))} "
                "longest:", "",
                "| # | initcall | start_s | ms | ret | line |", "|---:|---|---:|---:|---:|---:|"]
        for i, call in enumerate(initcalls.top(calls, report.top), start=1):
            start = "" if call.start_s is None else f"{call.start_s:.6f}"
            out.append(f"| {i} | {md(call.label)} | {start} | {_us(call.duration_us)} | "
                       f"{call.ret} | {call.line} |")
        out += ["", fenced(bootgraph.chart_text(calls, TEXT_WIDTH, report.top))]
    return out


def to_markdown(report: Report) -> str:
    """The report as Markdown."""
    out = [f"# Boot report: {md(report.subject())}", "",
           f"bootlab {__version__}, {len(report.parts)} input(s).", ""]
    if report.recommendations:
        out += _md_recommendations(report)
    columns, order = report.columns()
    if len(columns) > 1:
        out += ["## Comparison", "", fenced(compare.to_text(columns, order))]
        if (zero := compare.zero_note(report.entries())) is not None:
            out += [md(zero[0].upper() + zero[1:]) + ".", ""]
    axis = report.axis()
    for part in report.parts:
        out += _md_part(report, part, axis)
    for a, b, changes in report.initcall_diffs():
        out += [f"## Initcalls: {md(b)} against {md(a)}", "",
                "| change ms | initcall | A ms | B ms | boots A+B |", "|---:|---|---:|---:|---|"]
        for c in changes[:report.top]:
            out.append(f"| {c.delta_us / 1000:+.1f} | {md(c.label)} ({c.status}) | "
                       f"{'-' if c.a_us is None else _us(c.a_us)} | "
                       f"{'-' if c.b_us is None else _us(c.b_us)} | {c.n_a}+{c.n_b} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _html_recommendations(report: Report) -> list[str]:
    out = ['<section id="recommendations"><h2>Recommendations</h2><ol>']
    for rec in report.recommendations:
        measured = report.measurement(rec)
        data = recommendation_json(rec, measured)
        saving, trust = headline(data, measured)
        items = [f"<li><code>{escape(line)}</code></li>" for line in data["evidence"]]
        if data["ab_command"]:
            items.append(f"<li>measure it: <code>{escape(data['ab_command'])}</code></li>")
        out.append(f"<li><strong>{escape(data['title'])}</strong>"
                   + (f' <span class="saving">{escape(saving)}</span>' if saving else "")
                   + (f'<br/><span class="trust">{escape(trust)}</span>' if trust else "")
                   + (f"<br/>{escape(data['detail'])}" if data["detail"] else "")
                   + (f"<ul>{''.join(items)}</ul>" if items else "") + "</li>")
    return [*out, "</ol></section>"]


def _html_comparison(columns: list[compare.Column], order: list[str],
                     zero: str | None = None) -> list[str]:
    data = compare.to_json(columns, order)
    head = ["milestone", *(f"{c['name']} ({c['boots']})" for c in data["columns"])]
    rows: list[list[str]] = []
    lengths: list[list[str]] = []
    for milestone in data["milestones"]:
        if milestone["kind"] == "took":  # a unit's: in the sentences when it changed
            continue
        row = [milestone["id"]]
        (lengths if milestone["kind"] == "phase" else rows).append(row)
        for i, cell in enumerate(milestone["columns"]):
            if cell is None:
                row.append("-")
                continue
            text = f"{cell['median_s']:.3f}"
            if cell["n"] > 1:
                text += f" [{cell['min_s']:.3f}-{cell['max_s']:.3f}] n={cell['n']}"
            if i and cell["delta_s"] is not None:
                text += f" ({cell['delta_s']:+.3f})"
            row.append(text)
    said = compare.sentences(columns, order)
    out = ['<section id="comparison"><h2>Comparison</h2>',
           html_table(head, rows, set(range(1, len(head))))]
    if lengths:
        out += ["<details><summary>Each phase's length, from one milestone to the next"
                "</summary>", html_table(["phase", *head[1:]], lengths,
                                         set(range(1, len(head)))), "</details>"]
    if zero is not None:
        out.append(f"<p>{escape(zero[0].upper() + zero[1:])}.</p>")
    per_board = compare.board_columns(columns)
    if per_board:
        out += [f"<p>{escape(compare.PER_BOARD.capitalize())}:</p>",
                html_table(["milestone", *(f"{part.name} ({part.boots})" for part in per_board)],
                           ([milestone, *(f"{s.median:.3f}" if (s := part.summary(milestone))
                                          else "-" for part in per_board)]
                            for milestone in order),
                           set(range(1, len(per_board) + 1)))]
    if said:
        how = f", {compare.BLOCKED}" if per_board else ""
        out.append(f"<p>Against {escape(columns[0].name)} (difference of the means, "
                   f"{compare.LEVEL * 100:g}% confidence interval{how}):</p><ul>"
                   + "".join(f"<li>{escape(s)}</li>" for s in said) + "</ul>")
    return [*out, "</section>"]


def _html_part(report: Report, index: int, part: Part, axis: tuple[float, float]) -> list[str]:
    info = part.source
    facts = [(key, str(info[key])) for key in ("label", "board", "kind", "started_iso", "port")
             if info.get(key)]
    out = [f'<section class="session" id="session-{index}"><h2>{escape(part.name)}</h2>']
    if facts:
        out.append('<p class="meta">' + "; ".join(f"{escape(k)}: {escape(v)}" for k, v in facts)
                   + "</p>")
    out += [f'<p class="notice">{escape(n)}</p>' for n in _notes(part)]
    charts = [(boot, bars) for boot, bars in waterfalls(part) if bars]
    if charts:
        out.append(legend(STAGES))
    for boot, bars in charts:
        title = f"{part.name}: timeline" + (
            f", boot {boot.index}" if len(part.analysis.boots) > 1 else "")
        out.append(svg_chart(bars, axis, title))
    for boot in part.analysis.boots:
        out += _html_user_space(part, boot, axis)
    rows = [(str(boot.index), tables.shown_name(row.milestone), tables.shown_line(row.milestone),
             _fmt(row.elapsed_s), _fmt(row.delta_s, True),
             _fmt(row.duration_s), _fmt(row.milestone.kernel_s), row.milestone.text.strip())
            for boot in part.analysis.boots for row in table_rows(boot, part.ref)]
    out.append(html_table(tables.HEADER, rows, {2, 3, 4, 5, 6}, code=7) if rows
               else "<p>No milestones found.</p>")
    calls = part.initcalls
    if calls:
        shown = initcalls.top(calls, report.top)
        out += [f"<h3>Initcalls</h3><p>{len(calls)} initcalls and probes; initcalls total "
                f"{_us(initcalls.total_us(calls))} ms. The {len(shown)} longest:</p>",
                html_table(("#", "initcall", "start_s", "ms", "ret", "line"),
                           ((str(i), c.label, "-" if c.start_s is None else f"{c.start_s:.6f}",
                             _us(c.duration_us), str(c.ret), str(c.line))
                            for i, c in enumerate(shown, start=1)), {0, 2, 3, 4, 5}),
                legend(("initcall", "probe")),
                bootgraph.chart_svg(calls, report.top, f"{part.name}: initcalls")]
    return [*out, "</section>"]


def _html_user_space(part: Part, boot: Boot, axis: tuple[float, float]) -> list[str]:
    """A boot's user space below its timeline, folded: its units as a waterfall (the critical
    chain where systemd's record was placed), and U-Boot's stages and the units as the text
    under `analyze`'s table gives them."""
    rows = table_rows(boot, part.ref)
    text = [*stage_lines(boot, rows), *unit_lines(boot, rows)]
    if not text:
        return []
    spans = unit_spans(boot, rows)
    chained = boot.systemd is not None and boot.systemd.placed and bool(boot.systemd.chain)
    what = "the critical chain" if chained else "the slowest units"
    out = [f"<details><summary>Boot {boot.index}: before the prompt and user space, unit by "
           f"unit ({escape(what)})</summary>"]
    if spans:
        out.append(svg_chart([Bar(name, began, ready, "userspace", _ms(ready - began))
                              for name, began, ready in spans], axis,
                             f"{part.name}: {what}"))
    return [*out, f"<pre>{escape(chr(10).join(text))}</pre>", "</details>"]


def _html_diffs(report: Report) -> list[str]:
    out = []
    for a, b, changes in report.initcall_diffs():
        out += [f"<section><h2>Initcalls: {escape(b)} against {escape(a)}</h2>",
                html_table(("change ms", "initcall", "A ms", "B ms", "boots A+B"),
                           ((f"{c.delta_us / 1000:+.1f}", f"{c.label} ({c.status})",
                             "-" if c.a_us is None else _us(c.a_us),
                             "-" if c.b_us is None else _us(c.b_us), f"{c.n_a}+{c.n_b}")
                            for c in changes[:report.top]), {0, 2, 3}),
                "</section>"]
    return out


def to_html(report: Report) -> str:
    """The report as one self-contained HTML page (XHTML-compatible markup, no script)."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"/>',
           f'<meta http-equiv="Content-Security-Policy" content="{CSP}"/>',
           '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
           f"<title>bootlab report: {escape(report.subject())}</title>",
           f"<style>{CSS}</style></head><body>",
           f"<h1>Boot report: {escape(report.subject())}</h1>",
           f'<p class="meta">bootlab {escape(__version__)}, {len(report.parts)} input(s).</p>']
    if report.recommendations:
        out += _html_recommendations(report)
    columns, order = report.columns()
    if len(columns) > 1:
        out += _html_comparison(columns, order, compare.zero_note(report.entries()))
    axis = report.axis()
    for index, part in enumerate(report.parts, start=1):
        out += _html_part(report, index, part, axis)
    out += _html_diffs(report)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def render_as(fmt: str, renderers: Mapping[str, Callable[[], str]],
              data: Callable[[], object]) -> str:
    """A report in one of FORMATS: its `renderers` by name, JSON (as indented text) from
    `data`."""
    if fmt == "json":
        return json.dumps(data(), indent=1) + "\n"
    if fmt not in renderers:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return renderers[fmt]()


def render(report: Report, fmt: str) -> str:
    """The report in one of FORMATS (JSON as indented text)."""
    return render_as(fmt, {"markdown": partial(to_markdown, report),
                           "html": partial(to_html, report), "csv": partial(to_csv, report)},
                     partial(to_json, report))
