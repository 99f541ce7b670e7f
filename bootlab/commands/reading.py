"""The commands that read recorded boots: analyze, compare, replay, sessions, export, profiles."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bootlab import __version__
from bootlab.commands.common import (
    check_reference,
    fail,
    load_input,
    print_notices,
    source_info,
)
from bootlab.core.analysis import catalog, compare
from bootlab.core.analysis.explain import Missing, explain
from bootlab.core.analysis.loading import Loaded, Profiles
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.analysis.profile_files import builtin_names
from bootlab.core.analysis.profiles import Profile, ProfileError, load_profile
from bootlab.core.board.abfiles import ab_sessions, ab_variants
from bootlab.core.board.abplan import ABStateError, ab_board
from bootlab.core.capture.lines import LineFramer
from bootlab.core.capture.session import board_of, iter_sessions
from bootlab.core.capture.sources import Source, SourceError, open_source
from bootlab.core.capture.text import clean
from bootlab.core.files.config import examples_dir, profile_dirs, sessions_dir
from bootlab.core.render import jsontext, tables
from bootlab.exitcodes import BAD_INPUT, OK


def _load_one(args: argparse.Namespace) -> tuple[Loaded, str | None]:
    """Load and analyse `args.path` (its notices printed), check `--reference`."""
    loaded = load_input(args.path, args)
    return loaded, check_reference(args.reference, loaded.profile)


def run_analyze(args: argparse.Namespace) -> int:
    """Print the phase table (or JSON) of one input."""
    from bootlab.core.analysis import budgets

    try:
        loaded, reference = _load_one(args)
        source, analysis = loaded.source, loaded.analysis
        verdicts = _verdicts(args.budget, source, analysis) if args.budget else []
    except (SourceError, ProfileError, budgets.BudgetError) as error:
        return fail(str(error), BAD_INPUT)
    missing = explain(analysis, source.data, source.line_number) if args.explain else []
    if args.json:
        data = tables.to_json(analysis, source_info(source), reference)
        if args.budget:
            data["budgets"] = [{"boot": boot, "target": v.budget.target, "limit": v.budget.limit,
                                "measured": v.measured, "passed": v.passed,
                                "message": v.message()} for boot, v in verdicts]
        if args.explain:
            data["explain"] = [asdict(m) for m in missing]
        jsontext.write(data, sys.stdout)
    else:
        sys.stdout.write(tables.to_text(analysis, reference))
        for boot, verdict in verdicts:
            mark = "PASS" if verdict.passed else "FAIL"
            sys.stdout.write(f"{mark}  boot {boot}  {verdict.message()}\n")
        if args.explain:
            sys.stdout.write(_explanation(missing, profile_dirs(args.sessions)))
    return OK


def _explanation(missing: list[Missing], dirs: list[Path]) -> str:
    """`--explain` in words: per boot, each missing milestone's nearest lines and why."""
    if not missing:
        return "\nevery standard milestone was found\n"
    out: list[str] = []
    for boot in sorted({m.boot for m in missing}):
        here = [m for m in missing if m.boot == boot]
        quiet = [m.id for m in here if not m.candidates]
        out.append(f"\nboot {boot}: not found: {', '.join(m.id for m in here)}")
        if quiet:
            out.append(f"  no line looks like {', '.join(quiet)} (the board may not have "
                       "them, or prints them in words no rule knows)")
        for item in (m for m in here if m.candidates):
            where = " ".join(filter(None, (
                f"after {item.after[0]} (line {item.after[1]})" if item.after else "",
                f"before {item.before[0]} (line {item.before[1]})" if item.before else "")))
            out.append(f"  {item.id} ({item.title}){', looked ' + where if where else ''}:")
            for candidate in item.candidates:
                out.append(f"    line {candidate.line}: {clean(candidate.text)[:72]!r}")
                out.append(f"      {clean(candidate.reason)}")
            if item.suggestion:
                target = dirs[-1] / "linux.toml" if dirs else Path("linux.toml")
                out.append(f"    to take line {item.suggested_line} as {item.id}, add to your "
                           f"profile ({clean(str(target))}):")
                out += ["      " + line for line in item.suggestion.splitlines()]
    return "\n".join(out) + "\n"


def _verdicts(name: str, source: Source, analysis: Analysis) -> list[tuple[int, Any]]:
    """Each boot's budget verdicts."""
    from bootlab.core.analysis import budgets

    budget_file = budgets.load_budgets(budgets.find_budget_file(name))
    budgets.validate(budget_file, analysis.profile.by_id)
    figures = compare.probe_figures(source.meta)
    return [(boot.index, verdict) for boot in analysis.boots
            for verdict in budgets.evaluate(budget_file, boot,
                                            figures if boot.index == 1 else {})]


def run_compare(args: argparse.Namespace) -> int:
    """Boots side by side; boots sharing a label are grouped (with `--by-board`, a label and a
    board: `session.board_of`). An A/B state file (`ab-NAME.json`) stands for its run's
    sessions, and an A/B run's first variant is the reference column whatever boot came first;
    a run spread over several boards is compared with the board as a block."""
    entries: list[compare.Entry] = []
    order: dict[str, int] = {}
    profiles: Profiles = {}
    try:
        paths = [session for path in args.paths for session in (
            ab_sessions([path]) if path.name.startswith("ab-") and path.suffix == ".json"
            else [path])]
    except ABStateError as error:
        return fail(str(error), BAD_INPUT)
    ranks: dict[str, int] = {}
    for path in paths:
        try:
            loaded = load_input(path, args, profiles)
            reference = check_reference(args.reference, loaded.profile)
        except (SourceError, ProfileError) as error:
            return fail(str(error), BAD_INPUT)
        source, analysis = loaded.source, loaded.analysis
        order = {**analysis.profile.order, **order}
        label = clean(str(source.meta.get("label") or ""))
        for rank, variant in enumerate(ab_variants(path.parent, source.meta)):
            ranks.setdefault(variant, rank)
        figures = compare.probe_figures(source.meta)
        board = clean(board_of(source.meta) if args.by_board else ab_board(source.meta))
        for boot in analysis.boots:
            entries.append(compare.Entry(path.name, label, boot,
                                         reference or analysis.profile.reference,
                                         figures if boot.index == 1 else {}, board))
    entries.sort(key=lambda entry: ranks.get(entry.label, len(ranks)))   # stable
    columns = compare.build_columns(entries, group=not args.no_group, by_board=args.by_board,
                                    include_incomplete=args.include_incomplete)
    for note in compare.incomplete(entries):
        how = "its times on one side of the gap kept" if args.include_incomplete else \
            "left out (--include-incomplete keeps its times on one side of the gap)"
        sys.stderr.write(f"bootlab: {clean(note)}; {how}\n")
    zero = compare.zero_note(entries, args.include_incomplete)
    if zero is not None:
        sys.stderr.write(f"bootlab: {clean(zero)}\n")
    ids = compare.milestone_order(columns, order)
    if args.json:
        jsontext.write(compare.to_json(columns, ids), sys.stdout)
    else:
        sys.stdout.write(compare.to_text(columns, ids))
    return OK


def run_replay(args: argparse.Namespace) -> int:
    """Print a boot's lines at their original times (scaled by --speed)."""
    if args.speed < 0:
        return fail("--speed must be 0 (instant) or more", BAD_INPUT)
    try:
        source = open_source(args.path)
    except SourceError as error:
        return fail(str(error), BAD_INPUT)
    print_notices(args.path, source.notices)
    colour = sys.stdout.isatty()
    framer = LineFramer()
    data = source.data
    started = time.monotonic()
    previous = 0.0
    lines = framer.feed(data, None)
    last = framer.flush()
    for line in [*lines, *([last] if last else [])]:
        t = source.line_time(line.number, line.offset) if source.line_time else None
        if t is not None and args.speed > 0:
            delay = started + t / args.speed - time.monotonic()
            if delay > 0:
                sys.stdout.flush()
                time.sleep(delay)
        prefix = ""
        if args.timestamps:
            shown = t if t is not None else 0.0
            prefix = f"[{shown:11.6f} {shown - previous:9.6f}] "
            previous = shown
        sys.stdout.write(prefix + clean(line.raw, keep_sgr=colour) + "\n")
    return OK


def run_sessions(args: argparse.Namespace) -> int:
    """List the recorded boots in the sessions folder."""
    folder = sessions_dir(args.sessions)
    rows = [summary.to_json() for summary in
            catalog.summarize_all(iter_sessions(folder), profile_dirs(folder))]
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return OK
    if not rows:
        sys.stderr.write(f"bootlab: no sessions in {folder} (record one with "
                         "`bootlab record PORT`)\n")
        return OK
    _print_sessions(rows)
    for row in rows:  # damaged files: listed with what could be read, and why on stderr
        print_notices(Path(row["path"]), row.get("notices", []))
        if row.get("incomplete"):
            print_notices(Path(row["path"]), [row["incomplete"]])
    return OK


def _print_sessions(rows: list[dict[str, Any]]) -> None:
    def t(value: Any) -> str:
        return "-" if value is None else f"{value:.2f}"

    keys = catalog.KEY_MILESTONES
    print(f"{'session':40} {'label':12} {'board':10} {'place':10} {'total':>7} "
          + " ".join(f"{k:>15}" for k in keys))
    for row in rows:
        name = clean(Path(row["path"]).name)
        if "error" in row:
            print(f"{name:40} unreadable: {clean(row['error'])}")
            continue
        marks = " ".join(f"{t(row['milestones'].get(k)):>15}" for k in keys)
        label, board = clean(str(row["label"])), clean(str(row["board"]))
        place = clean(str(row["place"])) or "-"
        total = "gap" if row.get("incomplete") else t(row["total_s"])
        print(f"{name:40} {label[:12]:12} {board[:10]:10} {place[:10]:10} "
              f"{total:>7} {marks}")


def run_export(args: argparse.Namespace) -> int:
    """Write an export of one input to stdout or --output."""
    from bootlab.core.capture import exporters

    try:
        loaded, reference = _load_one(args)
    except (SourceError, ProfileError) as error:
        return fail(str(error), BAD_INPUT)
    source, analysis = loaded.source, loaded.analysis
    chunks: Iterable[str]
    if args.format == "asciicast":
        chunks = exporters.asciicast(source)
    elif args.format == "jsonl":
        chunks = exporters.jsonl(source)
    elif args.format == "csv":
        chunks = [tables.to_csv(analysis, reference)]
    else:
        chunks = [tables.to_markdown(analysis, reference)]
    try:
        out = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
    except OSError as error:
        return fail(f"{args.output}: cannot write: {error.strerror or error}", BAD_INPUT)
    try:
        for chunk in chunks:
            out.write(chunk)
    finally:
        if out is not sys.stdout:
            out.close()
    return OK


def run_profiles(args: argparse.Namespace) -> int:
    """List built-in and user profiles, checking every user profile."""
    dirs = profile_dirs(args.sessions)
    if args.show:
        try:
            profile = load_profile(args.show, dirs)
        except ProfileError as error:
            return fail(str(error), BAD_INPUT)
        _show_profile(profile)
        return OK
    bad = 0
    stages = set(builtin_names("stage"))
    for name in builtin_names():
        print(f"{name}\tbuilt-in\t{'stage' if name in stages else 'boot'}")
    for folder in dirs:
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                user = load_profile(str(path), dirs)
                print(f"{path.stem}\t{path}\t{user.kind}")
            except ProfileError as error:
                bad += 1
                sys.stderr.write(f"bootlab: {error}\n")
    return BAD_INPUT if bad else OK


def _show_profile(profile: Profile) -> None:
    """Print a profile's milestones in order with every rule that places them."""
    print(f"{profile.name}: {profile.title} ({profile.source}, {profile.kind})")
    for marker in profile.markers:
        flags = [f for f in ("partial", "new_boot", "fail", "ends_boot", "shared")
                 if getattr(marker, f)]
        if marker.occurrence != "first":
            flags.append(marker.occurrence)
        if marker.fallback:
            flags.append(f"fallback after {' or '.join(marker.fallback.after)}")
        print(f"  {marker.id:20} {marker.stage:10} {marker.title}"
              + (f"  [{', '.join(flags)}]" if flags else ""))
        for kind, patterns in (("", marker.patterns), ("weak: ", marker.weak),
                               ("context: ", marker.context)):
            for pattern in patterns:
                print(f"      {kind}{pattern.pattern}")
        for name, refused in marker.unless:
            print(f"      unless {name} ~ {refused.pattern}")
        for name, least in marker.at_least:
            print(f"      unless {name} >= {least:g}")
    for pattern in profile.kernel_lines:
        print(f"  kernel line: {pattern.pattern}")


def run_default(args: argparse.Namespace) -> int:
    """No command: show the bundled example boots, so a newcomer sees real data at once."""
    folder = examples_dir()
    paths = list(iter_sessions(folder)) if folder else []
    if not paths:
        return fail("no bundled example sessions found; try `bootlab --help`", BAD_INPUT)
    sys.stderr.write(f"bootlab {__version__}: no port given; these are the bundled example "
                     f"boots of the QEMU board in {folder}\n")
    ns = argparse.Namespace(paths=paths, json=False, no_group=False, by_board=False,
                            include_incomplete=False,
                            reference=None, profile=None, sessions=None)
    code = run_compare(ns)
    sys.stderr.write("\nnext: bootlab analyze FILE | bootlab replay FILE | "
                     "bootlab record /dev/ttyUSB0 --until login | bootlab --help\n")
    return code
