"""The commands that read recorded boots: analyze, compare, replay, sessions, export, profiles."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bootlab import __version__
from bootlab.cli import BAD_INPUT, OK
from bootlab.commands.common import fail, resolve_profile, sessions_dir
from bootlab.core import catalog, compare, tables
from bootlab.core.analysis import Analysis, analyze
from bootlab.core.config import examples_dir, profile_dirs
from bootlab.core.lines import LineFramer
from bootlab.core.profiles import Profile, ProfileError, builtin_names, load_profile
from bootlab.core.session import iter_sessions
from bootlab.core.sources import Source, SourceError, open_source
from bootlab.core.text import clean


def _profile_for(source: Source, args: argparse.Namespace) -> Profile:
    """The profile asked for, else the one the session was recorded with, else linux."""
    sessions = getattr(args, "sessions", None)
    if args.profile:
        return resolve_profile(args.profile, sessions)
    recorded = source.meta.get("profile")
    if isinstance(recorded, str) and recorded:
        try:
            return resolve_profile(recorded, sessions)
        except ProfileError:
            source.notices.append(f"profile {recorded!r} it was recorded with is not "
                                  "available here; using 'linux'")
    return resolve_profile(None, sessions)


def _load(path: Path, args: argparse.Namespace) -> tuple[Source, Analysis]:
    source = open_source(path, getattr(args, "kind", None))
    profile = _profile_for(source, args)
    analysis = analyze(source.data, profile, source.line_time)
    analysis.notices += source.notices
    return source, analysis


def _notices(path: Path, notices: Iterable[str]) -> None:
    for notice in notices:  # a notice may quote a file's content: never raw to the terminal
        sys.stderr.write(f"bootlab: {clean(str(path))}: {clean(notice)}\n")


def _source_info(source: Source) -> dict[str, Any]:
    keys = ("label", "board", "port", "baud", "profile", "settings", "started_iso", "bootlab")
    return {"path": str(source.path), "kind": source.kind,
            **{k: source.meta[k] for k in keys if k in source.meta}}


def _load_one(args: argparse.Namespace) -> tuple[Source, Analysis, str | None]:
    """Load and analyse `args.path`, report its notices, check `--reference`."""
    source, analysis = _load(args.path, args)
    reference = _check_reference(args.reference, analysis.profile)
    _notices(args.path, analysis.notices)
    return source, analysis, reference


def run_analyze(args: argparse.Namespace) -> int:
    """Print the phase table (or JSON) of one input."""
    from bootlab.core import budgets

    try:
        source, analysis, reference = _load_one(args)
        verdicts = _verdicts(args.budget, source, analysis) if args.budget else []
    except (SourceError, ProfileError, budgets.BudgetError) as error:
        return fail(str(error), BAD_INPUT)
    if args.json:
        data = tables.to_json(analysis, _source_info(source), reference)
        if args.budget:
            data["budgets"] = [{"boot": boot, "target": v.budget.target, "limit": v.budget.limit,
                                "measured": v.measured, "passed": v.passed,
                                "message": v.message()} for boot, v in verdicts]
        json.dump(data, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(tables.to_text(analysis, reference))
        for boot, verdict in verdicts:
            mark = "PASS" if verdict.passed else "FAIL"
            sys.stdout.write(f"{mark}  boot {boot}  {verdict.message()}\n")
    return OK


def _verdicts(name: str, source: Source, analysis: Analysis) -> list[tuple[int, Any]]:
    """Each boot's budget verdicts."""
    from bootlab.core import budgets

    budget_file = budgets.load_budgets(budgets.find_budget_file(name))
    budgets.validate(budget_file, analysis.profile.by_id)
    figures = compare.probe_figures(source.meta)
    return [(boot.index, verdict) for boot in analysis.boots
            for verdict in budgets.evaluate(budget_file, boot,
                                            figures if boot.index == 1 else {})]


def _check_reference(reference: str | None, profile: Profile) -> str | None:
    """The --reference value, if the profile knows it.

    Raises:
        ProfileError: it names no milestone of the profile.
    """
    if reference is not None and reference != "first-byte" and reference not in profile.by_id:
        raise ProfileError("--reference", None,
                           f"no milestone {reference!r} in profile {profile.name}")
    return reference


def run_compare(args: argparse.Namespace) -> int:
    """Boots side by side; boots sharing a label are grouped."""
    entries: list[compare.Entry] = []
    order: dict[str, int] = {}
    for path in args.paths:
        try:
            source, analysis = _load(path, args)
            reference = _check_reference(args.reference, analysis.profile)
        except (SourceError, ProfileError) as error:
            return fail(str(error), BAD_INPUT)
        _notices(path, analysis.notices)
        order = {**analysis.profile.order, **order}
        label = clean(str(source.meta.get("label") or ""))
        figures = compare.probe_figures(source.meta)
        for boot in analysis.boots:
            entries.append(compare.Entry(path.name, label, boot,
                                         reference or analysis.profile.reference,
                                         figures if boot.index == 1 else {}))
    columns = compare.build_columns(entries, group=not args.no_group)
    ids = compare.milestone_order(columns, order)
    if args.json:
        json.dump(compare.to_json(columns, ids), sys.stdout, indent=1)
        sys.stdout.write("\n")
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
    _notices(args.path, source.notices)
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
        _notices(Path(row["path"]), row.get("notices", []))
    return OK


def _print_sessions(rows: list[dict[str, Any]]) -> None:
    def t(value: Any) -> str:
        return "-" if value is None else f"{value:.2f}"

    keys = catalog.KEY_MILESTONES
    print(f"{'session':40} {'label':12} {'board':10} {'total':>7} "
          + " ".join(f"{k:>15}" for k in keys))
    for row in rows:
        name = clean(Path(row["path"]).name)
        if "error" in row:
            print(f"{name:40} unreadable: {clean(row['error'])}")
            continue
        marks = " ".join(f"{t(row['milestones'].get(k)):>15}" for k in keys)
        label, board = clean(str(row["label"])), clean(str(row["board"]))
        print(f"{name:40} {label[:12]:12} {board[:10]:10} "
              f"{t(row['total_s']):>7} {marks}")


def run_export(args: argparse.Namespace) -> int:
    """Write an export of one input to stdout or --output."""
    from bootlab.core import exporters

    try:
        source, analysis, reference = _load_one(args)
    except (SourceError, ProfileError) as error:
        return fail(str(error), BAD_INPUT)
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
        print(f"{profile.name}: {profile.title} ({profile.source})")
        for marker in profile.markers:
            flags = [f for f in ("partial", "new_boot", "fail") if getattr(marker, f)]
            if marker.occurrence != "first":
                flags.append(marker.occurrence)
            if marker.fallback:
                flags.append(f"fallback after {marker.fallback.after}")
            print(f"  {marker.id:20} {marker.stage:10} {marker.title}"
                  + (f"  [{', '.join(flags)}]" if flags else ""))
            for pattern in marker.patterns:
                print(f"      {pattern.pattern}")
        return OK
    bad = 0
    for name in builtin_names():
        print(f"{name}\tbuilt-in")
    for folder in dirs:
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                load_profile(str(path), dirs)
                print(f"{path.stem}\t{path}")
            except ProfileError as error:
                bad += 1
                sys.stderr.write(f"bootlab: {error}\n")
    return BAD_INPUT if bad else OK


def run_default(args: argparse.Namespace) -> int:
    """No command: show the bundled example boots, so a newcomer sees real data at once."""
    folder = examples_dir()
    paths = list(iter_sessions(folder)) if folder else []
    if not paths:
        return fail("no bundled example sessions found; try `bootlab --help`", BAD_INPUT)
    sys.stderr.write(f"bootlab {__version__}: no port given; these are the bundled example "
                     f"boots of the QEMU board in {folder}\n")
    ns = argparse.Namespace(paths=paths, json=False, no_group=False, reference=None,
                            profile=None, sessions=None)
    code = run_compare(ns)
    sys.stderr.write("\nnext: bootlab analyze FILE | bootlab replay FILE | "
                     "bootlab record /dev/ttyUSB0 --until login | bootlab --help\n")
    return code


def run_settings(args: argparse.Namespace) -> int:
    """List the one-key settings (built-in and the user's) with their keys."""
    from bootlab.core.settings import SettingsError, load_settings, settings_dirs

    try:
        settings = load_settings(settings_dirs(args.sessions))
    except SettingsError as error:
        return fail(str(error), BAD_INPUT)
    for setting in settings:
        where = setting.var or setting.name or ""
        print(f"{setting.key}  {setting.id:18} {setting.kind:14} {where:14} {setting.title}")
    return OK
