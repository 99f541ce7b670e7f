"""`bootlab boot` and `bootlab ab`: drive the board through its bootloader and measure boots."""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bootlab.cli import BAD_INPUT, NOT_MET, OK, PORT_FAILED
from bootlab.commands.common import fail, resolve_profile, sessions_dir
from bootlab.control.console import Console, ConsoleTimeout
from bootlab.control.engine import Bench, BootResult, Probe, RebootStrategy
from bootlab.control.link import PortLink
from bootlab.control.linux import Credentials, ShellError
from bootlab.control.uboot import UBootError, UBootOptions
from bootlab.core import compare
from bootlab.core.abplan import (
    ABStateError,
    SpecError,
    SpecItem,
    load_or_create,
    parse_spec,
    parse_variant,
)
from bootlab.core.analysis import analyze
from bootlab.core.hush import setenv_command
from bootlab.core.phases import phase_rows
from bootlab.core.profiles import Profile, ProfileError
from bootlab.core.recording import Recorder, StopRule
from bootlab.core.session import iter_sessions, load_session
from bootlab.core.settings import (
    BoardFacts,
    Kind,
    Plan,
    Setting,
    SettingsError,
    facts_from_log,
    load_settings,
    plan,
    settings_dirs,
)
from bootlab.core.sources import open_source
from bootlab.transports.port import PortError


@dataclass
class Session:
    """An open bench: link, recorder, engine."""

    link: PortLink
    recorder: Recorder
    bench: Bench


def _open(args: argparse.Namespace, profile: Profile, meta: dict[str, Any]) -> Session:
    link = PortLink(args.port, args.baud)
    recorder = Recorder(profile, sessions_dir(args.sessions), {**meta, "role": "setup"},
                        StopRule(), auto_split=False)
    console = Console(link, recorder, pace_s=args.pace_ms / 1000)
    console_options = UBootOptions(interrupt=args.interrupt.encode().decode("unicode_escape"),
                                   boot_command=args.boot_cmd)
    console_options.prompts += [re.compile(rf"(?m)(?:{p}) *$") for p in args.prompt]
    console_options.autoboot += [re.compile(p) for p in args.autoboot]
    reboot = RebootStrategy(args.reboot, args.power_cmd)
    bench = Bench(console, reboot, Credentials(args.user, args.password))
    bench.uboot.options = console_options
    return Session(link, recorder, bench)


def _open_checked(args: argparse.Namespace, profile: Profile,
                  meta: dict[str, Any]) -> Session | int:
    """The bench, or the exit code after saying why it cannot be opened."""
    if args.from_linux and not args.persist:
        return fail("--from-linux needs --persist: settings made with setenv alone are gone "
                    "after the first reboot", BAD_INPUT)
    try:
        return _open(args, profile, meta)
    except PortError as error:
        return fail(str(error), PORT_FAILED)
    except re.error as error:
        return fail(f"bad --prompt or --autoboot pattern: {error}", BAD_INPUT)


def _facts(args: argparse.Namespace, env: dict[str, str]) -> BoardFacts:
    path = args.facts_from
    if path is None:
        boots = [p for p in iter_sessions(sessions_dir(args.sessions))
                 if _meta(p).get("port") == args.port and _meta(p).get("role") == "boot"]
        path = boots[-1] if boots else None
    if path is None:
        return facts_from_log(None, env)
    source = open_source(path)
    return facts_from_log(source.data.decode("utf-8", "replace"), env)


def _meta(path: Path) -> dict[str, Any]:
    try:
        return load_session(path).meta
    except Exception:
        return {}


def _synthetic(items: Sequence[SpecItem]) -> tuple[list[Setting], dict[str, bool | str],
                                                   list[str]]:
    """Settings for the raw spec items: kernel tokens added or removed, U-Boot variables."""
    extra: list[Setting] = []
    chosen: dict[str, bool | str] = {}
    commands: list[str] = []
    for index, item in enumerate(items):
        if item.kind == "setting":
            chosen[item.name] = item.value if item.value is not None else True
        elif item.kind == "uboot":
            commands.append(setenv_command(item.name, item.value or None))
        else:
            token = item.value or ""
            name, _, value = token.partition("=")
            ident = f"spec_{index}"
            kind: Kind = "cmdline_remove" if item.kind == "cmdline_remove" else \
                ("cmdline_value" if value else "cmdline_flag")
            extra.append(Setting(ident, key=f"#{index}", title=str(item), kind=kind, name=name,
                                 value=value or None))
            chosen[ident] = True
    return extra, chosen, commands


def make_plan(settings: list[Setting], spec: Sequence[SpecItem], env: dict[str, str],
              facts: BoardFacts, force: Sequence[str]) -> tuple[Plan, list[str], dict[str, str]]:
    """A variant's plan, the U-Boot commands it takes, and the environment it leads to."""
    extra, chosen, raw = _synthetic(spec)
    result = plan([*settings, *extra], chosen, env, facts, force=force, persist=False)
    target = dict(result.env_after)
    for item in spec:
        if item.kind == "uboot":
            if item.value:
                target[item.name] = item.value
            else:
                target.pop(item.name, None)
    return result, [*result.commands, *raw], target


def _say(text: str) -> None:
    sys.stderr.write(f"bootlab: {text}\n")
    sys.stderr.flush()


def _probes(args: argparse.Namespace) -> tuple[Probe, ...]:
    return tuple(Probe.parse(p) for p in args.probe)


def _print_result(result: BootResult, profile: Profile) -> None:
    analysis = analyze(load_session(Path(result.path)).data, profile,
                       open_source(Path(result.path)).line_time)
    for boot in analysis.boots[:1]:
        for row in phase_rows(boot, "first-byte"):
            m = row.milestone
            elapsed = "-" if row.elapsed_s is None else f"{row.elapsed_s:8.3f}"
            print(f"{m.id:22} {elapsed}  {m.text.strip()[:60]}")
    for name, figures in result.probes.items():
        for key, value in figures.items():
            print(f"probe {name}.{key} = {value:g}")


def run_boot(args: argparse.Namespace) -> int:
    """One measured boot with the chosen settings (`--set ID[=VALUE]`, `--spec`)."""
    try:
        profile = resolve_profile(args.profile, args.sessions)
        settings = load_settings(settings_dirs(args.sessions))
        spec = parse_spec(",".join(args.set)) if args.set else []
        probes = _probes(args)
    except (ProfileError, SettingsError, SpecError, ValueError) as error:
        return fail(str(error), BAD_INPUT)
    meta = {"label": args.label, "board": args.board, "port": args.port, "baud": args.baud,
            "profile": profile.name}
    session = _open_checked(args, profile, meta)
    if isinstance(session, int):
        return session
    code = OK
    try:
        env = session.bench.printenv()
        facts = _facts(args, env)
        the_plan, commands, _ = make_plan(settings, spec, env, facts, args.force)
        if args.persist:
            commands.append("saveenv")
        _preview(the_plan, commands)
        if args.dry_run:
            return OK
        session.bench.apply(commands, persist=False, baud=the_plan.baud)
        result = session.bench.boot(
            {"label": args.label, "settings": the_plan.record}, args.persist, args.until,
            args.timeout, login=bool(args.login or args.probe or args.run), probes=probes,
            commands=tuple(args.run), from_linux=args.from_linux)
        _print_result(result, profile)
        for command, output in result.outputs.items():
            print(f"$ {command}\n{output}")
        if not result.reached:
            _say(f"{args.until} not reached within {args.timeout:.0f} s")
            code = NOT_MET
    except (UBootError, ShellError, ConsoleTimeout, RuntimeError) as error:
        code = fail(str(error), NOT_MET)
    except PortError as error:
        code = fail(str(error), PORT_FAILED)
    finally:
        session.recorder.finish()
        session.link.close()
    return code


def _preview(the_plan: Plan, commands: list[str]) -> None:
    for setting, why in the_plan.skipped.items():
        _say(f"not applied: {setting}: {why}")
    for warning in the_plan.warnings:
        _say(f"warning: {warning}")
    for command in commands:
        _say(f"will send: {command}")
    if the_plan.cmdline is not None:
        _say(f"kernel command line: {the_plan.cmdline}")


def run_ab(args: argparse.Namespace) -> int:
    """Interleaved, randomized A/B boots; then per-milestone statistics."""
    try:
        profile = resolve_profile(args.profile, args.sessions)
        settings = load_settings(settings_dirs(args.sessions))
        variants = [parse_variant(v) for v in args.variant]
        specs = {name: parse_spec(spec) for name, spec in variants}
        probes = _probes(args)
        if args.reference and args.reference != "first-byte" \
                and args.reference not in profile.by_id:
            raise ValueError(f"--reference {args.reference}: no such milestone in "
                             f"profile {profile.name}")
        if len(variants) < 2:
            raise ValueError("give at least two --variant (e.g. --variant base: --variant quiet)")
        state = load_or_create(sessions_dir(args.sessions), args.name, variants, args.boots,
                               args.seed)
    except (ProfileError, SettingsError, SpecError, ABStateError, ValueError) as error:
        return fail(str(error), BAD_INPUT)
    if state.dropped:
        _say(f"resuming: booting again {', '.join(state.dropped)}")
    meta = {"board": args.board, "port": args.port, "baud": args.baud,
            "profile": profile.name, "label": "setup"}
    session = _open_checked(args, profile, meta)
    if isinstance(session, int):
        return session
    code = OK
    try:
        baseline = session.bench.printenv()
        facts = _facts(args, baseline)
        plans = {name: make_plan(settings, specs[name], baseline, facts, args.force)
                 for name in specs}
        targets = [target for _, _, target in plans.values()]
        touched = sorted({v for t in targets for v in set(t) | set(baseline)
                          if t.get(v) != baseline.get(v)})
        for name, (the_plan, commands, _) in plans.items():
            _say(f"variant {name}: " + ("; ".join(commands) or "as the board is"))
            for warning in the_plan.warnings:
                _say(f"variant {name}: warning: {warning}")
        while (run := state.next_run()) is not None:
            variant, index = run
            _say(state.progress(run))
            the_plan, _, target = plans[variant]
            sync = _sync(session.bench.printenv(), target, touched)
            if args.persist:
                sync.append("saveenv")
            session.bench.apply(sync, persist=False, baud=the_plan.baud)
            result = session.bench.boot(
                {**state.session_meta(variant, index), "settings": the_plan.record},
                args.persist, args.until, args.timeout,
                login=bool(args.login or args.probe or args.run), probes=probes,
                commands=tuple(args.run), from_linux=args.from_linux)
            if result.reached:
                session.recorder.writer.event("end", time.monotonic_ns()
                                              - session.recorder.writer.start_ns,
                                              reason="done")
                session.bench.setup_session(label="setup")
                state.mark_done(variant, index, Path(result.path).name)
            else:
                _say(f"{variant} run {index}: {args.until} not reached; it will be retried")
                session.bench.setup_session(label="setup")
        if args.persist:
            restore = _sync(session.bench.printenv(), baseline, touched)
            session.bench.apply([*restore, "saveenv"] if restore else [], persist=False)
    except (UBootError, ShellError, ConsoleTimeout, RuntimeError) as error:
        code = fail(f"{error} (run the same command again to resume)", NOT_MET)
    except PortError as error:
        code = fail(f"{error} (run the same command again to resume)", PORT_FAILED)
    finally:
        session.recorder.finish()
        session.link.close()
    if code == OK:
        _report(state.done, sessions_dir(args.sessions), profile,
                args.reference or profile.reference)
    return code


def _sync(current: dict[str, str], target: dict[str, str], touched: list[str]) -> list[str]:
    """Commands taking the variables the variants touch from `current` to `target`."""
    return [setenv_command(var, target.get(var)) for var in touched
            if current.get(var) != target.get(var)]


def _report(done: dict[tuple[str, int], str], folder: Path, profile: Profile,
            reference: str) -> None:
    entries = []
    for (variant, _), name in sorted(done.items()):
        source = open_source(folder / name)
        for boot in analyze(source.data, profile, source.line_time).boots[:1]:
            entries.append(compare.Entry(name, variant, boot, reference,
                                         compare.probe_figures(source.meta)))
    columns = compare.build_columns(entries)
    order = compare.milestone_order(columns, profile.order)
    sys.stdout.write(compare.to_text(columns, order))

