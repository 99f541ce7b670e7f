"""`bootlab report` (Markdown, HTML, CSV or JSON of recorded boots, with the recommendations
of the advice engine, or of a tune run's state file) and `bootlab initcalls`."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from bootlab.commands.common import check_reference, fail, load_input, print_notices, source_info
from bootlab.core.advice.recommendation import Recommendation, rank
from bootlab.core.advice.rules import advise
from bootlab.core.analysis import compare, initcalls
from bootlab.core.analysis.loading import Profiles
from bootlab.core.analysis.profiles import ProfileError
from bootlab.core.board.abplan import ab_board
from bootlab.core.board.tuneplan import TuneState, TuneStateError
from bootlab.core.capture.sources import Source, SourceError, open_source
from bootlab.core.capture.text import clean
from bootlab.core.render import bootgraph
from bootlab.core.render.report import Part, Report, render
from bootlab.core.render.tune_report import load_tune_report
from bootlab.core.render.tune_report import render as render_tune
from bootlab.exitcodes import BAD_INPUT, NOT_MET, OK


def _parts(args: argparse.Namespace) -> tuple[list[Part], list[Recommendation]]:
    """Load and analyse every input; the recommendations for them (one per kind, the median
    boot's, largest saving first).

    Raises:
        SourceError, ProfileError: an input or the profile cannot be read.
    """
    parts: list[Part] = []
    found: list[Recommendation] = []
    profiles: Profiles = {}
    for path in args.paths:
        loaded = load_input(path, args, profiles)
        source, analysis = loaded.source, loaded.analysis
        reference = check_reference(args.reference, analysis.profile)
        found += advise(source, analysis)
        parts.append(Part(path.name, source_info(source), analysis, reference,
                          initcalls.parse(source.data), compare.probe_figures(source.meta),
                          ab_board(source.meta)))
    return parts, rank(found)


def _write(text: str, output: Path | None) -> int:
    if output is None:
        sys.stdout.write(text)
        return OK
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        return fail(f"{output}: cannot write: {error.strerror or error}", BAD_INPUT)
    return OK


def run_report(args: argparse.Namespace) -> int:
    """Write the report of the inputs in the chosen format."""
    if args.top < 1:
        return fail("--top must be 1 or more", BAD_INPUT)
    if any(path.suffix == ".json" for path in args.paths):
        return _tune_report(args)
    try:
        parts, recommendations = _parts(args)
    except (SourceError, ProfileError) as error:
        return fail(str(error), BAD_INPUT)
    report = Report(parts, recommendations, args.top)
    return _write(render(report, args.format), args.output)


def _tune_report(args: argparse.Namespace) -> int:
    """The report of one tune run: its state file, the sessions it names beside it."""
    if len(args.paths) != 1:
        return fail("a tune state (tune-NAME.json) is reported on its own: give just it",
                    BAD_INPUT)
    try:
        state = TuneState.load(args.paths[0])
    except TuneStateError as error:
        return fail(str(error), BAD_INPUT)
    report = load_tune_report(state)
    for problem in report.problems:
        sys.stderr.write(f"bootlab: {clean(problem)}\n")
    return _write(render_tune(report, args.format), args.output)


def _label(source: Source) -> str:
    """The session's label, safe to print."""
    return clean(str(source.meta.get("label") or ""))


def run_initcalls(args: argparse.Namespace) -> int:
    """Top initcalls, total and bootgraph per input; groups compared with the first.

    Exit 1 when no input holds initcall_debug output.
    """
    if args.top < 1:
        return fail("--top must be 1 or more", BAD_INPUT)
    width = args.width or shutil.get_terminal_size().columns
    inputs: list[tuple[str, str, list[initcalls.Initcall]]] = []
    for path in args.paths:
        try:
            source = open_source(path, args.kind)
        except SourceError as error:
            return fail(str(error), BAD_INPUT)
        print_notices(path, source.notices)
        calls = initcalls.parse(source.data)
        if not calls:
            sys.stderr.write(f"bootlab: {path}: no initcall_debug output (boot with "
                             "`bootlab boot PORT --set initcall_debug`)\n")
        inputs.append((path.name, _label(source), calls))
    if not any(calls for _, _, calls in inputs):
        return NOT_MET
    diffs = initcalls.diff_groups(inputs)
    if args.json:
        json.dump(_initcalls_json(inputs, diffs, args.top), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return OK
    try:
        _print_initcalls(inputs, diffs, args.top, width)
    except ValueError as error:
        return fail(f"--width: {error}", BAD_INPUT)
    return OK


def _initcalls_json(inputs: list[tuple[str, str, list[initcalls.Initcall]]],
                    diffs: list[tuple[str, str, list[initcalls.Change]]],
                    top: int) -> dict[str, Any]:
    return {
        "inputs": [{"name": name, "label": label, "count": len(calls),
                    "total_us": initcalls.total_us(calls),
                    "top": [c.to_json() for c in initcalls.top(calls, top)]}
                   for name, label, calls in inputs],
        "diffs": [{"a": a, "b": b, "changes": [c.to_json() for c in changes[:top]]}
                  for a, b, changes in diffs],
    }


def _print_initcalls(inputs: list[tuple[str, str, list[initcalls.Initcall]]],
                     diffs: list[tuple[str, str, list[initcalls.Change]]],
                     top: int, width: int) -> None:
    for name, label, calls in inputs:
        if not calls:
            continue
        shown = initcalls.top(calls, top)
        print(f"{clean(name)}{f' ({label})' if label else ''}: {len(calls)} initcalls and probes, "
              f"initcalls total {initcalls.total_us(calls) / 1000:.1f} ms")
        for c in shown:
            start = "" if c.start_s is None else f"{c.start_s:12.6f}"
            print(f"  {c.duration_us / 1000:9.1f} ms {start:>12}  {c.label}"
                  + (f"  (returned {c.ret})" if c.ret else ""))
        print()
        sys.stdout.write(bootgraph.chart_text(calls, width, top))
        print()
    for a, b, changes in diffs:
        print(f"{clean(b)} against {clean(a)}:")
        for change in changes[:top]:
            print("  " + initcalls.describe_change(change))
        print()
