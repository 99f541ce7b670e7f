"""The report of a tune run (`bootlab tune`, the app's "Tune this board"), in the formats of
`bootlab report`.

A `TuneReport` is a `TuneState` with its baseline and final boots analysed (read from the
sessions the state names, beside the state file). It shows the result (the goal's median
before and after, the total cut), the before/after waterfall of the median boots on one time
axis, each step with its predicted and measured saving, interval, boots, outcome and why, the
evidence that a setting was in force, what was rejected or harmful and why, the savings that
need a rebuild, and the exact commands that set the final configuration by hand.

Every piece of text from the board or the state (titles, reasons, evidence quoting device
lines) is escaped as the boot report's is (`markup`). The environment backup stays out: a report
is for sharing, the backup is for `--restore`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from statistics import median_low
from typing import Any

from bootlab import __version__
from bootlab.core.analysis.loading import Profiles, load
from bootlab.core.analysis.phases import phase_rows
from bootlab.core.analysis.profiles import STAGES, ProfileError
from bootlab.core.board.tuneplan import TuneState, TuneStep
from bootlab.core.capture.sources import SourceError
from bootlab.core.capture.text import clean
from bootlab.core.render import tables
from bootlab.core.render.markup import CSP, CSS, fenced, html_table, legend, md, md_code
from bootlab.core.render.report import TEXT_WIDTH, Part, render_as, waterfalls
from bootlab.core.render.svg import Bar, escape, svg_chart, text_chart

CSV_HEADER = ("step", "setting", "title", "predicted_ms", "saving_ms", "low_ms", "high_ms",
              "boots", "outcome", "why")


@dataclass
class Boots:
    """One side of the before/after: its boots analysed, the goal's time in each."""

    parts: list[Part]
    goal_s: list[float | None]
    """The goal's elapsed time in each part (None: not reached)."""

    @property
    def reached(self) -> list[float]:
        """The goal's times of the boots that reached it."""
        return [t for t in self.goal_s if t is not None]

    @property
    def median_s(self) -> float | None:
        """The goal's median time (None: no boot reached it)."""
        return median_low(self.reached) if self.reached else None

    def median_part(self) -> Part | None:
        """The boot whose goal time is the median (the one the waterfall draws); the first
        boot when none reached the goal."""
        if not self.parts:
            return None
        middle = self.median_s
        return self.parts[0] if middle is None else self.parts[self.goal_s.index(middle)]


def goal_time(part: Part, goal: str) -> float | None:
    """The goal milestone's elapsed time in the part's first boot that reached it."""
    for boot in part.analysis.boots:
        for row in phase_rows(boot, part.ref):
            if row.milestone.id == goal and row.elapsed_s is not None:
                return row.elapsed_s
    return None


@dataclass
class TuneReport:
    """What a tune report shows; render it with `render`."""

    state: TuneState
    before: Boots
    after: Boots
    problems: list[str]
    """Session files that could not be read, in words."""

    def cut_ms(self) -> float | None:
        """The measured total cut at the goal: median before minus median after (ms)."""
        before, after = self.before.median_s, self.after.median_s
        return None if before is None or after is None else (before - after) * 1000

    def kept_sum_ms(self) -> float:
        """The sum of the kept steps' measured savings (ms)."""
        return sum(step.saving_ms or 0.0 for step in self.state.steps if step.outcome == "kept")

    def waterfall(self) -> list[tuple[str, Part, list[Bar]]]:
        """The median boot of each side with its phases as bars: ("before", ...), ("after", ...)."""
        out = []
        for side, boots in (("before", self.before), ("after", self.after)):
            part = boots.median_part()
            if part is not None:
                bars = next((bars for _, bars in waterfalls(part) if bars), [])
                out.append((side, part, bars))
        return out

    def axis(self) -> tuple[float, float]:
        """The before and after waterfalls' common time axis."""
        bars = [bar for _, _, bars in self.waterfall() for bar in bars]
        return (min([0.0, *(bar.start for bar in bars)]),
                max([bar.end for bar in bars], default=1.0))


def _boots(state: TuneState, names: list[str], problems: list[str],
           cache: Profiles) -> Boots:
    parts: list[Part] = []
    times: list[float | None] = []
    for name in names:
        path = state.path.parent / Path(name).name
        try:
            loaded = load(path, cache=cache)
        except (SourceError, ProfileError) as error:
            problems.append(f"{name}: {error}")
            continue
        meta = loaded.source.meta
        info: dict[str, Any] = {"path": str(path), "kind": loaded.source.kind,
                                **{k: meta[k] for k in ("label", "board") if k in meta}}
        part = Part(path.name, info, loaded.analysis)
        parts.append(part)
        times.append(goal_time(part, state.goal))
    return Boots(parts, times)


def load_tune_report(state: TuneState) -> TuneReport:
    """The tune's report: its baseline and final sessions read from the state's folder (a
    file that cannot be read is named in `problems`, the rest is still shown)."""
    problems: list[str] = []
    cache: Profiles = {}
    before = _boots(state, state.baseline, problems, cache)
    after = _boots(state, state.final, problems, cache)
    return TuneReport(state, before, after, problems)


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f} s"


def saving_text(step: TuneStep) -> str:
    """The step's measured saving with its interval: `512 ms [430, 590]`, or '-'."""
    if step.saving_ms is None:
        return "-"
    interval = f" [{step.low_ms:.0f}, {step.high_ms:.0f}]" \
        if step.low_ms is not None and step.high_ms is not None else ""
    return f"{step.saving_ms:.0f} ms{interval}"


def _status(state: TuneState) -> str:
    if state.finished:
        return "finished: " + (state.stopped_why or "nothing left to try")
    return "not finished" + (f": {state.stopped_why}" if state.stopped_why else
                             " (running, or interrupted: it resumes where it stopped)")


def summary_lines(report: TuneReport) -> list[str]:
    """The result in words: the goal before and after, the cut, what was kept, the status."""
    state, before, after = report.state, report.before, report.after
    goal = state.goal
    lines = [f"{goal} before: {_s(before.median_s)} (median of {len(before.reached)} boots)",
             f"{goal} after: {_s(after.median_s)} (median of {len(after.reached)} boots)"]
    cut = report.cut_ms()
    if cut is not None and before.median_s:
        lines.append(f"total cut: {cut:.0f} ms ({cut / 10 / before.median_s:.0f}%)")
    kept = [step for step in state.steps if step.outcome == "kept"]
    lines.append(f"kept {len(kept)} of {len(state.steps)} steps, measured savings adding up "
                 f"to {report.kept_sum_ms():.0f} ms: " + (state.spec() or "nothing"))
    if state.budget_s is not None:
        met = after.median_s is not None and after.median_s <= state.budget_s
        lines.append(f"budget {state.budget_s:g} s: {'met' if met else 'not met'}")
    lines.append(_status(state))
    return lines


def _step_row(number: int, step: TuneStep) -> list[str]:
    """A step's cells, its text cleaned (`text.clean`: no control sequence survives)."""
    return [str(number), clean(step.setting), clean(step.title), f"{step.predicted_ms:.0f} ms",
            saving_text(step), str(step.boots or "-"), step.outcome, clean(step.why)]


def _h(text: str) -> str:
    """State or device text as HTML character data: cleaned, then escaped."""
    return escape(clean(text))


STEP_HEAD = ("#", "setting", "recommendation", "predicted", "measured saving [interval]",
             "boots each", "outcome", "why")


def to_json(report: TuneReport) -> dict[str, Any]:
    """The report as data: the state (without the environment backup), the result, and the
    before and after boots' phase tables."""
    tune = report.state.to_json()
    del tune["env_backup"]

    def side(boots: Boots) -> dict[str, Any]:
        return {"median_s": boots.median_s, "goal_s": boots.goal_s,
                "sessions": [tables.to_json(p.analysis, p.source, p.reference)
                             for p in boots.parts]}

    return {"format": "bootlab-tune-report", "version": 1, "bootlab": __version__,
            "tune": tune, "before": side(report.before), "after": side(report.after),
            "cut_ms": report.cut_ms(), "kept_sum_ms": report.kept_sum_ms(),
            "problems": report.problems}


def to_csv(report: TuneReport) -> str:
    """One row per step (ms; empty where unknown)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for number, step in enumerate(report.state.steps, start=1):
        writer.writerow((number, step.setting, tables.sheet_text(step.title),
                         f"{step.predicted_ms:.0f}",
                         *("" if v is None else f"{v:.0f}"
                           for v in (step.saving_ms, step.low_ms, step.high_ms)),
                         step.boots, step.outcome, tables.sheet_text(step.why)))
    return buffer.getvalue()


def _not_kept(state: TuneState) -> list[TuneStep]:
    return [step for step in state.steps if step.outcome in ("rejected", "harmful")]


def to_markdown(report: TuneReport) -> str:
    """The report as Markdown."""
    state = report.state
    out = [f"# Tune report: {md(state.name)}", "",
           f"bootlab {__version__}; board {md(state.port)}, goal {md(state.goal)}"
           + ("; settings saved (saveenv)" if state.persist else "") + ".", ""]
    out += [f"- notice: {md(problem)}" for problem in report.problems]
    out += ["## Result", "", *(f"- {md(line)}" for line in summary_lines(report)), ""]
    drawn = report.waterfall()
    if drawn:
        out += ["## Before and after", ""]
        axis = report.axis()
        for side, part, bars in drawn:
            out += [f"### {side.capitalize()}: {md(part.name)}", "",
                    fenced(text_chart(bars, TEXT_WIDTH, axis))]
    out += ["## Steps", ""]
    if state.steps:
        out += ["| " + " | ".join(STEP_HEAD) + " |",
                "|---:|---|---|---:|---:|---:|---|---|"]
        for number, step in enumerate(state.steps, start=1):
            row = _step_row(number, step)
            out.append("| " + " | ".join([row[0], md_code(row[1]), *map(md, row[2:])]) + " |")
        out.append("")
        for number, step in enumerate(state.steps, start=1):
            if step.evidence:
                out += [f"Step {number} ({md_code(step.setting)}), in force as the boots showed:",
                        "", *(f"- {md_code(line)}" for line in step.evidence), ""]
    else:
        out += ["No step was tried.", ""]
    rejected = _not_kept(state)
    if rejected:
        out += ["## Rejected and harmful", ""]
        out += [f"- {md_code(step.setting)} {step.outcome}: {md(step.why)}" for step in rejected]
        out.append("")
    if state.rebuild:
        out += ["## Needs a rebuild", "",
                "Listed with their predicted saving, never applied by the tune:", ""]
        out += [f"- {md(title)}: predicted saving {ms:.0f} ms" for title, ms in state.rebuild]
        out.append("")
    out += ["## Reproduce by hand", ""]
    if state.commands:
        out += ["At the U-Boot prompt:", "", fenced("\n".join(state.commands))]
    else:
        out += ["Nothing was kept: the board's configuration is unchanged.", ""]
    return "\n".join(out).rstrip() + "\n"


def _html_steps(state: TuneState) -> list[str]:
    out = ['<section id="steps"><h2>Steps</h2>']
    if not state.steps:
        return [*out, "<p>No step was tried.</p></section>"]
    out.append(html_table(STEP_HEAD,
                          (_step_row(n, s) for n, s in enumerate(state.steps, start=1)),
                          {0, 3, 4, 5}, code=1))
    for number, step in enumerate(state.steps, start=1):
        if step.evidence:
            out.append(f"<p>Step {number} (<code>{_h(step.setting)}</code>), in force as "
                       "the boots showed:</p><ul>"
                       + "".join(f"<li><code>{_h(line)}</code></li>" for line in step.evidence)
                       + "</ul>")
    return [*out, "</section>"]


def to_html(report: TuneReport) -> str:
    """The report as one self-contained HTML page (no script, no external resource)."""
    state = report.state
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"/>',
           f'<meta http-equiv="Content-Security-Policy" content="{CSP}"/>',
           '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
           f"<title>bootlab tune report: {_h(state.name)}</title>",
           f"<style>{CSS}</style></head><body>",
           f"<h1>Tune report: {_h(state.name)}</h1>",
           f'<p class="meta">bootlab {escape(__version__)}; board {_h(state.port)}, goal '
           f"{_h(state.goal)}" + ("; settings saved (saveenv)" if state.persist else "")
           + ".</p>"]
    out += [f'<p class="notice">{_h(problem)}</p>' for problem in report.problems]
    out += ['<section id="result"><h2>Result</h2><ul>',
            *(f"<li>{_h(line)}</li>" for line in summary_lines(report)), "</ul></section>"]
    drawn = report.waterfall()
    if drawn:
        axis = report.axis()
        out += ['<section id="waterfall"><h2>Before and after</h2>', legend(STAGES)]
        out += [svg_chart(bars, axis, f"{side}: {part.name}") for side, part, bars in drawn]
        out.append("</section>")
    out += _html_steps(state)
    rejected = _not_kept(state)
    if rejected:
        out += ['<section id="rejected"><h2>Rejected and harmful</h2><ul>',
                *(f"<li><code>{_h(step.setting)}</code> {escape(step.outcome)}: "
                  f"{_h(step.why)}</li>" for step in rejected), "</ul></section>"]
    if state.rebuild:
        out += ['<section id="rebuild"><h2>Needs a rebuild</h2>',
                "<p>Listed with their predicted saving, never applied by the tune:</p><ul>",
                *(f'<li>{_h(title)}: <span class="saving">predicted saving {ms:.0f} ms'
                  "</span></li>" for title, ms in state.rebuild), "</ul></section>"]
    out.append('<section id="reproduce"><h2>Reproduce by hand</h2>')
    if state.commands:
        out += ["<p>At the U-Boot prompt:</p><ul>",
                *(f"<li><code>{_h(c)}</code></li>" for c in state.commands), "</ul>"]
    else:
        out.append("<p>Nothing was kept: the board's configuration is unchanged.</p>")
    out += ["</section>", "</body></html>"]
    return "\n".join(out) + "\n"


def render(report: TuneReport, fmt: str) -> str:
    """The report in one of FORMATS (JSON as indented text)."""
    return render_as(fmt, {"markdown": partial(to_markdown, report),
                           "html": partial(to_html, report), "csv": partial(to_csv, report)},
                     partial(to_json, report))
