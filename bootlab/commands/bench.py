"""The open bench the board commands share (`boot`, `ab`, `tune`): the port, its recorder and
the engine, opened from the command's options; the board's facts from its last boot on that
port; progress and messages on stderr; what Ctrl-C puts back."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bootlab.commands import places
from bootlab.commands.common import fail, goal_of
from bootlab.control import abrun
from bootlab.control.board_console import Console, ConsoleTimeout
from bootlab.control.engine import Bench, Probe, RebootStrategy
from bootlab.control.linux import Credentials, ShellError
from bootlab.control.routes import restore_outstanding, state_file_of
from bootlab.control.uboot import UBootError, UBootOptions
from bootlab.core.analysis.goals import Goal, with_goal
from bootlab.core.analysis.loading import resolve_profile
from bootlab.core.analysis.profiles import Profile
from bootlab.core.board.facts import BoardFacts, facts_from_log
from bootlab.core.board.settings import Setting, load_settings, settings_dirs
from bootlab.core.capture.redaction import SecretInput
from bootlab.core.capture.session import iter_sessions, load_session
from bootlab.core.capture.sources import open_source
from bootlab.core.files.config import sessions_dir
from bootlab.core.recording.recorder import Recorder, StopRule
from bootlab.exitcodes import BAD_INPUT, NOT_MET, PORT_FAILED
from bootlab.session.portlink import PortLink
from bootlab.transports.place import PlaceError
from bootlab.transports.port import PortError


@dataclass
class Session:
    """An open bench: link, recorder, engine, and the place it holds (if any)."""

    link: PortLink
    recorder: Recorder
    bench: Bench
    held: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    """What closes after the link: the labgrid place, released."""

    def close(self) -> None:
        """Close the port, then release the place."""
        try:
            self.link.close()
        finally:
            self.held.close()


def _open(args: argparse.Namespace, profile: Profile, meta: dict[str, Any],
          place: places.OpenPlace | None, reboot: RebootStrategy) -> Session:
    if place is None:
        link = PortLink(args.port, args.baud)
    else:
        link = PortLink(place.console_url(), args.baud, locate=place.console_url)
        meta = {**meta, "port": args.port, "baud": args.baud, **places.session_meta(place)}
    recorder = Recorder(profile, sessions_dir(args.sessions), {**meta, "role": "setup"},
                        StopRule(), auto_split=False)
    console = Console(link, recorder, pace_s=args.pace_ms / 1000)
    if args.secret_prompt:
        console.secrets = SecretInput(re.compile(args.secret_prompt))
    console_options = UBootOptions(interrupt=args.interrupt.encode().decode("unicode_escape"),
                                   boot_command=args.boot_cmd)
    console_options.prompts += [re.compile(rf"(?m)(?:{p}) *$") for p in args.prompt]
    console_options.autoboot += [re.compile(p) for p in args.autoboot]
    if place is not None and place.power is not None:
        reboot = RebootStrategy(args.reboot or "power", args.power_cmd, power=place.power.cycle,
                                power_name=f"place {place.name} ({place.power.name})")
    bench = Bench(console, reboot, Credentials(args.user, args.password))
    bench.uboot.options = console_options
    return Session(link, recorder, bench)


def open_bench(args: argparse.Namespace, profile: Profile, meta: dict[str, Any],
               place: places.OpenPlace | None = None) -> Session | int:
    """The bench, or the exit code after saying why it cannot be opened. A place (`--place`,
    LG_PLACE) is acquired first; it is released when the session closes, or here on a failure
    or Ctrl-C, and SIGTERM interrupts like Ctrl-C meanwhile. `place`: one the caller holds
    (and releases), `args.port` its `place:NAME`."""
    if args.from_linux and not args.persist:
        return fail("--from-linux needs --persist: settings made with setenv alone are gone "
                    "after the first reboot", BAD_INPUT)
    try:
        spec = None if place is not None else places.resolve(args)
        reboot = RebootStrategy.of(args.reboot, args.power_cmd, args.power_on_cmd,
                                   args.power_off_cmd, args.power_off)
    except ValueError as error:
        return fail(str(error), BAD_INPUT)
    held = contextlib.ExitStack()
    try:
        if spec is not None:
            place = places.enter(held, spec, args, say)
        session = _open(args, profile, meta, place, reboot)
    except BaseException as error:
        held.close()
        if isinstance(error, PlaceError):
            return fail(str(error), places.exit_code(error))
        if isinstance(error, PortError):
            return fail(str(error), PORT_FAILED)
        if isinstance(error, re.error):
            return fail(f"bad --prompt, --autoboot or --secret-prompt pattern: {error}",
                        BAD_INPUT)
        if isinstance(error, KeyboardInterrupt):
            return fail("cancelled", NOT_MET)
        raise
    session.held = held
    return session


def board_facts(args: argparse.Namespace, env: dict[str, str]) -> BoardFacts:
    """The board's facts with `env`: from `--facts-from`, else the port's newest boot of the
    board as it is (a boot whose recorded settings chose nothing: a base variant, a setup
    boot, a recording), else its newest boot at all; none for a port never booted here."""
    path = args.facts_from
    if path is None:
        metas = [(p, _meta(p)) for p in iter_sessions(sessions_dir(args.sessions))]
        boots = [(p, meta) for p, meta in metas
                 if meta.get("port") == args.port and meta.get("role") == "boot"]
        as_is = [p for p, meta in boots if not (meta.get("settings") or {}).get("chosen")]
        newest = as_is or [p for p, _ in boots]
        path = newest[-1] if newest else None
    if path is None:
        return facts_from_log(None, env)
    source = open_source(path)
    return facts_from_log(source.data.decode("utf-8", "replace"), env)


def _meta(path: Path) -> dict[str, Any]:
    try:
        return load_session(path).meta
    except Exception:
        return {}


def say(text: str) -> None:
    sys.stderr.write(f"bootlab: {text}\n")
    sys.stderr.flush()


def probes_of(args: argparse.Namespace) -> tuple[Probe, ...]:
    return tuple(Probe.parse(p) for p in args.probe)


def cancelled(*benches: Bench) -> int:
    """Ctrl-C: put an edited file back before each port closes (else the next start does)."""
    say("cancelled")
    for bench in benches:
        try:
            restore_outstanding(bench, state_file_of(bench), say, "cancelled")
        except (UBootError, ShellError, ConsoleTimeout, RuntimeError, KeyboardInterrupt) as error:
            say(f"the edited file is not restored yet ({error or 'interrupted'}); the next "
                 "bootlab boot or ab on this port restores it first (or --restore)")
    return NOT_MET


def say_progress(event: abrun.ABEvent) -> None:
    """An A/B run's progress on stderr (`[BOARD] ` first in a run over several boards)."""
    board = getattr(event, "board", "")
    on = f"[{board}] " if board else ""
    match event:
        case abrun.VariantPlanned(variant, commands, warnings):
            say(f"{on}variant {variant}: " + ("; ".join(commands) or "as the board is"))
            for warning in warnings:
                say(f"{on}variant {variant}: warning: {warning}")
        case abrun.BootStarting(text=text):
            say(f"{on}{text}")
        case abrun.BootFinished(variant=variant, run=run, incomplete=str(why)) if why:
            say(f"{on}{variant} run {run}: {why}; it will be booted again")
        case abrun.BootFinished(variant, run, reached, goal) if not reached:
            say(f"{on}{variant} run {run}: {goal} not reached; it will be retried")
        case abrun.BoardFailed(board):
            say(f"[{board}] this board failed: every board of the run stops")
        case abrun.LookJudged(lines=lines, final=final, boots=boots):
            for line in lines:
                say(line)
            if final:
                say(f"stopping after {boots} boots per variant")


def board_setup(args: argparse.Namespace) -> tuple[Profile, Goal, list[Setting]]:
    """What a board command measures with (`measuring`); a place asked for becomes the port
    `place:NAME` (places.resolve).

    Raises:
        ProfileError, GoalError, SettingsError: a bad profile, goal or settings file.
        ValueError: no port and no place, or both.
    """
    places.resolve(args)
    return measuring(args)


def measuring(args: argparse.Namespace) -> tuple[Profile, Goal, list[Setting]]:
    """The profile (holding the goal's milestone), the goal and the settings model.

    Raises:
        ProfileError, GoalError, SettingsError: a bad profile, goal or settings file.
    """
    profile = resolve_profile(args.profile, args.sessions)
    goal = goal_of(args, profile)
    return with_goal(profile, goal), goal, load_settings(settings_dirs(args.sessions))


def ab_options(args: argparse.Namespace, goal: Goal) -> abrun.ABOptions:
    """How each A/B boot of `ab` (and of each `tune` step) is made, from the options."""
    return abrun.ABOptions(args.persist, goal, args.timeout,
                           bool(args.login or args.probe or args.run), probes_of(args),
                           tuple(args.run), args.from_linux, tuple(args.force), args.collect)
