"""The commands that judge recorded boots: `advise` (what to change next, and how much it
should save) and `check` (budgets per milestone, a regression gate for a bench or CI job).

`add_parsers` adds both to the command line's subparsers; `run_advise` and `run_check` run
them. Exit codes as everywhere: 0 fine, 1 a budget was missed, 2 unusable input.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bootlab.commands.common import fail, load_input
from bootlab.core.advice.predictions import ABBoot, Outcome, ab_boots, check_predictions
from bootlab.core.advice.recommendation import Recommendation, Route, rank, route_for
from bootlab.core.advice.rules import advise
from bootlab.core.advice.uart import Uart
from bootlab.core.analysis import budgets
from bootlab.core.analysis.clocks import BootTimeline, unify
from bootlab.core.analysis.compare import probe_figures
from bootlab.core.analysis.loading import Profiles
from bootlab.core.analysis.profiles import ProfileError
from bootlab.core.board.abfiles import ab_sessions
from bootlab.core.board.abplan import ABStateError
from bootlab.core.board.settings import SettingsError, load_settings, settings_dirs
from bootlab.core.capture.session import port_header
from bootlab.core.capture.sources import SourceError
from bootlab.core.files.config import sessions_dir
from bootlab.exitcodes import BAD_INPUT, NOT_MET, OK


def _timeline_lines(path: Path, boots: Sequence[BootTimeline]) -> list[str]:
    out = []
    for boot in boots:
        parts = []
        if boot.fit is not None:
            parts.append(f"printk time 0 at {boot.fit.offset_s:.3f} s "
                         f"(±{boot.fit.uncertainty_ms:.1f} ms)")
        if boot.kernel_entry_gap is not None:
            gap, uncertainty = boot.kernel_entry_gap
            parts.append(f"Starting kernel → printk 0: {gap * 1000:.0f} ms "
                         f"(±{uncertainty:.1f} ms)")
        burst = boot.burst
        if burst is not None:
            parts.append(f"console-enable burst lines {burst.first_line}-{burst.last_line}, "
                         f"up to {burst.delay_ms:.0f} ms late")
        backed_up = boot.fit.late - (burst.lines if burst else 0) if boot.fit else 0
        if boot.fit is not None and backed_up > 0:
            parts.append(f"{backed_up} more kernel lines late (console backed up, up to "
                         f"{boot.fit.worst_ms:.0f} ms)")
        if parts:
            out.append(f"{path}#{boot.boot}: " + "; ".join(parts))
    return out


def _predicted(rec: Recommendation) -> str:
    text = f"{rec.predicted_ms:.0f} ms"
    notes = []
    if rec.boots > 1 and rec.low_ms is not None and rec.high_ms is not None:
        notes.append(f"median of {rec.boots} boots, {rec.low_ms:.0f}-{rec.high_ms:.0f}")
    if rec.bound_ms is not None:
        notes.append(f"upper bound {rec.bound_ms:.0f} ms")
    return text + (f" ({'; '.join(notes)})" if notes else "")


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _rec_json(rec: Recommendation, port: str, outcomes: Sequence[Outcome],
              route: Route) -> dict[str, Any]:
    return {
        "id": rec.id, "title": rec.title, "predicted_ms": _ms(rec.predicted_ms),
        "boots": rec.boots, "low_ms": _ms(rec.low_ms), "high_ms": _ms(rec.high_ms),
        "bound_ms": _ms(rec.bound_ms),
        "setting": rec.setting,
        "milestone": rec.milestone, "detail": rec.detail, "source": rec.source,
        "evidence": [{"line": n, "text": t} for n, t in rec.evidence],
        "ab_command": rec.ab_command(port, route=route),
        **({"cannot_apply": route.blocked} if route.blocked else {}),
        "measured": [{
            "run": o.run, "variant": o.variant, "milestone": o.milestone,
            "measured_ms": _ms(o.measured_ms),
            "low_ms": None if o.difference is None else _ms(-o.difference.high * 1000.0),
            "high_ms": None if o.difference is None else _ms(-o.difference.low * 1000.0),
            "shown": None if o.difference is None else o.difference.shown, "text": o.text(),
        } for o in outcomes],
    }


def _rec_text(index: int, rec: Recommendation, port: str,
              outcomes: Sequence[Outcome], route: Route) -> str:
    setting = f"  [{rec.setting}]" if rec.setting else ""
    lines = [f"{index}. {rec.title}: {_predicted(rec)}{setting}", f"   {rec.detail}"]
    lines += [f"   {rec.source}:{n}  {t}" for n, t in rec.evidence]
    command = rec.ab_command(port, route=route)
    if command:
        lines.append(f"   check: {command}")
    elif route.blocked and rec.variant:
        lines.append(f"   check: bootlab cannot apply it on this board: {route.blocked}")
    bound = "" if rec.bound_ms is None else f" (upper bound {rec.bound_ms:.0f} ms)"
    for outcome in outcomes:
        measured = outcome.measured_ms
        versus = "" if measured is None else \
            f" — predicted {rec.predicted_ms:.0f} ms{bound}, measured {measured:.0f} ms"
        lines.append(f"   A/B {outcome.run}: {outcome.text()}{versus}")
    return "\n".join(lines)


def run_advise(args: argparse.Namespace) -> int:
    """Print the recommendations for the given boots, ranked, with A/B results if given."""
    found: list[Recommendation] = []
    ports: dict[str, str] = {}
    arguments: dict[str, object] = {}
    """Per session: where its board's kernel arguments come from, as a run there found."""
    clocks: list[str] = []
    uart = Uart(args.uart_fifo, args.uart_refill)
    profiles: Profiles = {}
    try:
        for path in args.paths:
            loaded = load_input(path, args, profiles)
            source, analysis = loaded.source, loaded.analysis
            found += advise(source, analysis, uart)
            port = source.meta.get("port")
            ports[str(source.path)] = shlex.quote(port) if isinstance(port, str) else "PORT"
            arguments[str(source.path)] = source.meta.get("arguments") or \
                port_header(Path(source.path).parent, port, "arguments")
            clocks += _timeline_lines(path, unify(analysis, source).boots)
        ab: list[ABBoot] = []
        order: dict[str, int] = {}
        for path in ab_sessions(args.ab):
            loaded = load_input(path, args, profiles)
            ab += ab_boots(loaded.source.meta, loaded.analysis)
            order = {**loaded.profile.order, **order}
    except (SourceError, ProfileError, ABStateError) as error:
        return fail(str(error), BAD_INPUT)
    if args.ab and not ab:
        sys.stderr.write("bootlab: none of the --ab sessions was recorded by `bootlab ab`\n")
    ranked = rank(found)
    outcomes = check_predictions(ranked, ab, order)

    def measured(rec: Recommendation) -> list[Outcome]:
        return [o for o in outcomes if o.recommendation is rec]

    try:
        kinds = {s.id: s.kind for s in load_settings(settings_dirs(sessions_dir(args.sessions)))}
    except SettingsError as error:
        return fail(str(error), BAD_INPUT)

    def route(rec: Recommendation) -> Route:
        return route_for(kinds.get(rec.setting or "", "").startswith("cmdline"),
                         arguments.get(rec.source))

    if args.json:
        json.dump({"timeline": clocks,
                   "recommendations": [_rec_json(r, ports.get(r.source, "PORT"), measured(r),
                                                 route(r)) for r in ranked]},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
        return OK
    blocks = ["\n".join(clocks)] if clocks else []
    blocks += [_rec_text(i, r, ports.get(r.source, "PORT"), measured(r), route(r))
               for i, r in enumerate(ranked, start=1)] or ["nothing to advise"]
    sys.stdout.write("\n\n".join(blocks) + "\n")
    return OK


def run_check(args: argparse.Namespace) -> int:
    """Check each boot against the budgets; exit 1 when any is missed."""
    try:
        budget_file = budgets.load_budgets(budgets.find_budget_file(args.budget))
        results: list[budgets.BootResult] = []
        profiles: Profiles = {}
        for path in args.paths:
            loaded = load_input(path, args, profiles)
            budgets.validate(budget_file, loaded.profile.by_id)
            figures = probe_figures(loaded.source.meta)
            results += [budgets.BootResult(str(path), boot.index, tuple(
                budgets.evaluate(budget_file, boot, figures if boot.index == 1 else {})))
                for boot in loaded.analysis.boots]
    except budgets.BudgetError as error:
        return fail(str(error), BAD_INPUT)
    except (SourceError, ProfileError) as error:
        return fail(str(error), BAD_INPUT)
    if args.junit is not None:
        try:
            args.junit.write_text(budgets.junit_xml(results), encoding="utf-8")
        except OSError as error:
            return fail(f"{args.junit}: cannot write: {error.strerror or error}", BAD_INPUT)
    passed = all(r.passed for r in results)
    if args.json:
        json.dump({"budget_file": budget_file.path, "passed": passed, "boots": [{
            "session": r.session, "boot": r.boot, "passed": r.passed, "budgets": [{
                "target": v.budget.target, "limit": v.budget.limit, "measured": v.measured,
                "margin": v.margin, "passed": v.passed, "message": v.message()}
                for v in r.verdicts]} for r in results]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for result in results:
            boot = f"#{result.boot}" if result.boot > 1 else ""
            for verdict in result.verdicts:
                mark = "PASS" if verdict.passed else "FAIL"
                sys.stdout.write(f"{mark}  {result.session}{boot}  {verdict.message()}\n")
        failed = sum(not v.passed for r in results for v in r.verdicts)
        total = sum(len(r.verdicts) for r in results)
        sys.stderr.write(f"bootlab: {total - failed} of {total} budgets met"
                         f" ({budget_file.path})\n")
    return OK if passed else NOT_MET
