"""`bootlab report` (Markdown, HTML, CSV or JSON of recorded boots) and `bootlab initcalls`.

Recommendations join the report when the advice engine (`bootlab.core.advice`) is there: it is
looked up once, when this module is imported; without it reports simply have none.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bootlab.cli import BAD_INPUT, NOT_MET, OK
from bootlab.commands.common import fail
from bootlab.commands.inspect import _check_reference, _load, _notices, _source_info
from bootlab.core import compare, initcalls
from bootlab.core.analysis import Analysis
from bootlab.core.profiles import ProfileError
from bootlab.core.report import FORMATS, Part, Report, render
from bootlab.core.sources import KINDS, Source, SourceError, open_source
from bootlab.core.text import clean

Advisor = Callable[[Sequence[tuple[Source, Analysis]]], Sequence[Any]]


def _find_advisor() -> Advisor | None:
    """The advice engine, when installed: `advise(source, analysis)` per input, the lists
    merged by `rank` (one per kind, the median boot's, largest saving first)."""
    try:
        module = importlib.import_module("bootlab.core.advice")
    except ImportError:
        return None
    advise, rank = getattr(module, "advise", None), getattr(module, "rank", None)
    if not (callable(advise) and callable(rank)):
        return None

    def advisor(inputs: Sequence[tuple[Source, Analysis]]) -> Sequence[Any]:
        found: list[Any] = []
        for source, analysis in inputs:
            found += advise(source, analysis)
        return list(rank(found))

    return advisor


ADVISOR = _find_advisor()


def _input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", type=Path, nargs="+", metavar="SESSION",
                        help="session files or logs (grabserial, dmesg, plain captures)")
    parser.add_argument("--kind", choices=KINDS, help="input kind (default: detected)")


def add_parsers(sub: Any) -> None:
    """Add `report` and `initcalls` to the CLI's subparsers (`sub` from add_subparsers)."""
    rep = sub.add_parser("report", help="a report of recorded boots: phases, timeline, "
                                        "A/B statistics, initcalls, recommendations")
    _input_options(rep)
    rep.add_argument("--format", choices=FORMATS, default="markdown",
                     help="markdown (default), html (one self-contained file), csv, json")
    rep.add_argument("-o", "--output", type=Path, default=None,
                     help="write here instead of stdout")
    rep.add_argument("--top", type=int, default=15, metavar="N",
                     help="initcalls listed and charted per session (default 15)")
    rep.add_argument("--reference", default=None, metavar="MILESTONE",
                     help="measure elapsed times from this milestone (default: first byte)")
    rep.add_argument("--profile", default=None,
                     help="marker profile: a built-in name, a user profile's name or a "
                          ".toml path (default: the one recorded, else linux)")
    rep.add_argument("--sessions", type=Path, default=None, metavar="DIR",
                     help="sessions folder, for user profiles (default: ./sessions)")

    ini = sub.add_parser("initcalls", help="initcall_debug timings: top N, total, bootgraph; "
                                           "differences between boots or labels")
    _input_options(ini)
    ini.add_argument("--top", type=int, default=20, metavar="N",
                     help="initcalls listed and charted (default 20)")
    ini.add_argument("--width", type=int, default=None, metavar="COLUMNS",
                     help="chart width (default: the terminal's)")
    ini.add_argument("--json", action="store_true", help="print JSON")


def _parts(args: argparse.Namespace) -> tuple[list[Part], Sequence[Any]]:
    """Load and analyse every input; the recommendations for them, when advice exists.

    Raises:
        SourceError, ProfileError: an input or the profile cannot be read.
    """
    parts: list[Part] = []
    loaded: list[tuple[Source, Analysis]] = []
    for path in args.paths:
        source, analysis = _load(path, args)
        reference = _check_reference(args.reference, analysis.profile)
        _notices(path, analysis.notices)
        loaded.append((source, analysis))
        parts.append(Part(path.name, _source_info(source), analysis, reference,
                          initcalls.parse(source.data), compare.probe_figures(source.meta)))
    return parts, ADVISOR(loaded) if ADVISOR is not None else ()


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
    try:
        parts, recommendations = _parts(args)
    except (SourceError, ProfileError) as error:
        return fail(str(error), BAD_INPUT)
    report = Report(parts, recommendations, args.top)
    return _write(render(report, args.format), args.output)


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
        _notices(path, source.notices)
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
        sys.stdout.write(initcalls.chart_text(calls, width, top))
        print()
    for a, b, changes in diffs:
        print(f"{clean(b)} against {clean(a)}:")
        for change in changes[:top]:
            print("  " + initcalls.describe_change(change))
        print()
