"""`bootlab ab`: interleaved A/B boots on one board, or on several identical boards in parallel
(`--also-port`, or several labgrid places), then one verdict and per-milestone statistics.

The command is three steps, so that any way of opening boards can share the middle one:
`prepare_ab` reads the options and the run's state (nothing opened yet), the boards are opened
(`open_places` acquires every place first, in one ExitStack; `open_boards`: one bench per port
or place), and `ab_on_benches` runs the A/B on the opened benches and prints the report. A
bench's board is named by its sessions' header (`session.board_of`: the `board` field, else the
port, `place:NAME` for a place), so each bench needs a header of its own: with several boards
and `--board NAME`, each board is `NAME@PORT`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from bootlab.commands import places
from bootlab.commands.bench import (
    Session,
    ab_options,
    board_facts,
    cancelled,
    measuring,
    open_bench,
    say,
    say_progress,
)
from bootlab.commands.board import restore_first
from bootlab.commands.common import fail
from bootlab.control import abpower, abrun
from bootlab.control.abverify import NotInForce
from bootlab.control.board_console import ConsoleTimeout
from bootlab.control.engine import Bench
from bootlab.control.linux import ShellError
from bootlab.control.planning import SettingRefused
from bootlab.control.uboot import UBootError
from bootlab.core.analysis.goals import Goal, GoalError, several_to_judge
from bootlab.core.analysis.profiles import Profile, ProfileError
from bootlab.core.analysis.sequential import parse_effect
from bootlab.core.board.abplan import (
    ABState,
    ABStateError,
    SpecError,
    load_or_create,
    parse_variant,
)
from bootlab.core.board.settings import Setting, SettingsError
from bootlab.core.files.config import sessions_dir
from bootlab.exitcodes import BAD_INPUT, NOT_IN_FORCE, NOT_MET, OK, PORT_FAILED
from bootlab.transports.place import PlaceError
from bootlab.transports.port import PortError


@dataclass
class ABRun:
    """What `bootlab ab` runs, read from its options before any board is opened."""

    profile: Profile
    goal: Goal
    settings: list[Setting]
    options: abrun.ABOptions
    state: ABState
    reference: str
    effect_s: float
    places: places.Wanted | None = None
    """The labgrid places to acquire; None: the boards are local ports."""


def prepare_ab(args: argparse.Namespace) -> ABRun | int:
    """The run the options ask for (a new state, or the one to resume), or the exit code after
    saying what is wrong."""
    try:
        wanted = places.wanted(args)
        profile, goal, settings = measuring(args)
        if (why := several_to_judge(goal, "an A/B run")) is not None:
            raise GoalError(why)
        variants = [parse_variant(v) for v in args.variant]
        options = ab_options(args, goal)
        if args.reference and args.reference != "first-byte" \
                and args.reference not in profile.by_id:
            raise ValueError(f"--reference {args.reference}: no such milestone in "
                             f"profile {profile.name}")
        if len(variants) < 2:
            raise ValueError("give at least two --variant (e.g. --variant base: --variant quiet)")
        effect_s = parse_effect(args.effect)
        state = load_or_create(sessions_dir(args.sessions), args.name, variants,
                               args.max_boots if args.until_decided else args.boots, args.seed,
                               until_effect_s=effect_s if args.until_decided else None,
                               save=False)
    except (ProfileError, GoalError, SettingsError, SpecError, ABStateError,
            ValueError) as error:
        return fail(str(error), BAD_INPUT)
    if state.dropped:
        say(f"resuming: booting again {', '.join(state.dropped)}")
    return ABRun(profile, goal, settings, options, state, args.reference or profile.reference,
                 effect_s, wanted)


def open_places(args: argparse.Namespace, run: ABRun,
                held: contextlib.ExitStack) -> list[places.OpenPlace] | int:
    """Acquire every place of the run in `held` before any boot (none for local ports), or
    the exit code, with those acquired so far released when `held` closes."""
    if run.places is None:
        return []
    try:
        return places.enter_all(held, run.places, args, say)
    except PlaceError as error:
        return fail(str(error), places.exit_code(error))
    except KeyboardInterrupt:
        return fail("cancelled", NOT_MET)


def open_boards(args: argparse.Namespace, profile: Profile,
                opened: Sequence[places.OpenPlace] = ()) -> list[Session] | int:
    """A bench on each opened place, else on the port and each `--also-port` (`{port}` in
    the power commands becomes each board's port), or the exit code, with those opened so far
    closed."""
    boards: list[tuple[str, places.OpenPlace | None]] = \
        [(places.PREFIX + place.name, place) for place in opened] \
        or [(port, None) for port in (args.port, *args.also_port)]
    ports = [port for port, _ in boards]
    if len(set(ports)) != len(ports):
        return fail(f"a port is given twice: {' '.join(ports)}", BAD_INPUT)
    sessions: list[Session] = []
    for port, place in boards:
        board = args.board if len(ports) == 1 or not args.board else f"{args.board}@{port}"
        one = argparse.Namespace(**{**vars(args), "port": port, "board": board, **{
            key: getattr(args, key) and getattr(args, key).replace("{port}", port)
            for key in ("power_cmd", "power_on_cmd", "power_off_cmd")}})
        if place is not None:
            one.baud = args.baud or place.baud
        meta = {"board": board, "port": port, "baud": one.baud, "profile": profile.name,
                "label": "setup"}
        session = open_bench(one, profile, meta, place)
        if isinstance(session, int):
            close(sessions)
            return session
        sessions.append(session)
    return sessions


def close(sessions: Sequence[Session]) -> None:
    """Finish each bench's recording and close it (the last opened first)."""
    for session in reversed(sessions):
        session.recorder.finish()
        session.close()


def ab_on_benches(args: argparse.Namespace, run: ABRun, benches: Sequence[Bench]) -> int:
    """The A/B run on opened benches (one per board; several boot in parallel, each round on
    one board, the statistics blocked by board), then its report on stdout; the exit code.
    The caller closes the benches."""
    state = run.state
    state.save()  # the boards are open: the run exists now (a refused one leaves no state)
    ports = [str(bench.console.recorder.meta.get("port", "")) for bench in benches]
    if state.until is not None:
        spread = abpower.recorded_spread(sessions_dir(args.sessions), ports, run.profile,
                                         run.reference, run.goal)
        for line in abpower.power_lines(spread, state.design, state.until.effect_s):
            say(line)
    code = OK
    try:
        if any([restore_first(args, bench) for bench in benches]):
            return OK
        abrun.run_ab(benches, state, run.settings, lambda env: board_facts(args, env),
                     run.options, say_progress,
                     lambda s: abrun.judge_look(s, run.profile, run.reference, run.goal))
    except NotInForce as error:
        code = fail(f"not in force: {error}", NOT_IN_FORCE)
    except SettingRefused as error:
        code = fail(f"{error} (no boot was measured)", BAD_INPUT)
    except KeyboardInterrupt:
        code = cancelled(*benches)
    except (UBootError, ShellError, ConsoleTimeout, RuntimeError) as error:
        code = fail(f"{error} (run the same command again to resume)", NOT_MET)
    except (PortError, PlaceError) as error:
        code = fail(f"{error} (run the same command again to resume)", PORT_FAILED)
    except ValueError as error:
        code = fail(str(error), BAD_INPUT)
    if code == OK:
        result = abrun.report(state, run.profile, run.reference, run.settings, run.goal,
                              run.effect_s)
        sys.stdout.write(result.text() + result.evidence_text())
    return code


def run_ab(args: argparse.Namespace) -> int:
    """Interleaved, randomized A/B boots on the port (and each `--also-port`, in parallel), or
    on the places (each `--place`, `--place-tag`'s free ones), all acquired before any boot
    and released at the end, on an error, Ctrl-C or SIGTERM; then one verdict and
    per-milestone statistics."""
    run = prepare_ab(args)
    if isinstance(run, int):
        return run
    with contextlib.ExitStack() as held:
        opened = open_places(args, run, held)
        if isinstance(opened, int):
            return opened
        sessions = open_boards(args, run.profile, opened)
        if isinstance(sessions, int):
            return sessions
        try:
            return ab_on_benches(args, run, [session.bench for session in sessions])
        finally:
            close(sessions)
