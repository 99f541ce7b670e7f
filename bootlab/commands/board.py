"""`bootlab boot` and `bootlab ab`: drive the board through its bootloader and measure boots."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bootlab.cli import BAD_INPUT, NOT_MET, OK, PORT_FAILED
from bootlab.commands.common import fail, resolve_profile, sessions_dir
from bootlab.control import abrun
from bootlab.control.console import Console, ConsoleTimeout
from bootlab.control.engine import Bench, BootResult, Probe, RebootStrategy
from bootlab.control.link import PortLink
from bootlab.control.linux import Credentials, ShellError
from bootlab.control.uboot import UBootError, UBootOptions
from bootlab.core.abplan import (
    ABStateError,
    SpecError,
    load_or_create,
    parse_spec,
    parse_variant,
)
from bootlab.core.analysis import analyze
from bootlab.core.phases import phase_rows
from bootlab.core.profiles import Profile, ProfileError
from bootlab.core.recording import Recorder, StopRule
from bootlab.core.redaction import SecretInput
from bootlab.core.session import iter_sessions, load_session
from bootlab.core.settings import (
    BoardFacts,
    Plan,
    SettingsError,
    facts_from_log,
    load_settings,
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
    if args.secret_prompt:
        console.secrets = SecretInput(re.compile(args.secret_prompt))
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
        return fail(f"bad --prompt, --autoboot or --secret-prompt pattern: {error}", BAD_INPUT)


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
        the_plan, commands, _ = abrun.make_plan(settings, spec, env, facts, args.force)
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
        options = abrun.ABOptions(args.persist, args.until, args.timeout,
                                  bool(args.login or args.probe or args.run), _probes(args),
                                  tuple(args.run), args.from_linux, tuple(args.force))
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
        abrun.run_ab(session.bench, state, settings, lambda env: _facts(args, env), options,
                     _say_progress)
    except (UBootError, ShellError, ConsoleTimeout, RuntimeError) as error:
        code = fail(f"{error} (run the same command again to resume)", NOT_MET)
    except PortError as error:
        code = fail(f"{error} (run the same command again to resume)", PORT_FAILED)
    finally:
        session.recorder.finish()
        session.link.close()
    if code == OK:
        sys.stdout.write(abrun.report(state, profile, args.reference or profile.reference).text())
    return code


def _say_progress(event: abrun.ABEvent) -> None:
    """An A/B run's progress on stderr."""
    match event:
        case abrun.VariantPlanned(variant, commands, warnings):
            _say(f"variant {variant}: " + ("; ".join(commands) or "as the board is"))
            for warning in warnings:
                _say(f"variant {variant}: warning: {warning}")
        case abrun.BootStarting(text=text):
            _say(text)
        case abrun.BootFinished(variant, run, reached, goal) if not reached:
            _say(f"{variant} run {run}: {goal} not reached; it will be retried")
