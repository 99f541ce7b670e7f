"""`bootlab tune`: cut a board's boot time unattended, each step proven by an A/B run
(`control.tuneloop`), and `bootlab tune PORT --restore` to put its environment back.

Exit codes: 0 the tune finished (or was restored); 1 the --budget was not met, or the board did
not cooperate (run the same command again to resume); 2 bad input; 3 the port failed.
"""

from __future__ import annotations

import argparse
import sys

from bootlab.commands.bench import (
    ab_options,
    board_facts,
    board_setup,
    cancelled,
    open_bench,
    say,
    say_progress,
)
from bootlab.commands.common import fail
from bootlab.control import abrun
from bootlab.control.board_console import ConsoleTimeout
from bootlab.control.linux import ShellError
from bootlab.control.planning import SettingRefused
from bootlab.control.tuneloop import TuneOptions, median_s, restore, run_tune
from bootlab.control.uboot import UBootError
from bootlab.core.analysis.goals import Goal, GoalError, several_to_judge
from bootlab.core.analysis.profiles import Profile, ProfileError
from bootlab.core.analysis.sequential import parse_effect
from bootlab.core.board.abplan import SpecError, format_spec, parse_spec
from bootlab.core.board.settings import SettingsError
from bootlab.core.board.tuneplan import (
    TuneBaseline,
    TuneEvent,
    TuneFinished,
    TuneRanked,
    TuneState,
    TuneStateError,
    TuneStepDone,
    TuneStepStarted,
    state_path,
)
from bootlab.core.files.config import sessions_dir
from bootlab.exitcodes import BAD_INPUT, NOT_MET, OK, PORT_FAILED
from bootlab.transports.port import PortError


def _seconds(text: str | None) -> float | None:
    return None if text is None else parse_effect(text)


def _state(args: argparse.Namespace, goal: str) -> TuneState:
    """The tune NAME's state: resumed from its file, or a new one (not yet saved) measuring
    to the milestone `goal`.

    Raises:
        TuneStateError: the file is unusable, or belongs to another port.
        ValueError: a bad name or budget.
    """
    path = state_path(sessions_dir(args.sessions), args.name)
    if path.exists():
        state = TuneState.load(path)
        if state.port != args.port:
            raise TuneStateError(f"{path}: tune {args.name!r} is of port {state.port}; give "
                                 "another --name")
        return state
    return TuneState(path, args.name, args.port, goal, _seconds(args.budget), args.max_hours,
                     bool(args.persist))


def run_tune_command(args: argparse.Namespace) -> int:
    """`bootlab tune`: run, resume or restore a tune on the board."""
    try:
        profile, goal, settings = board_setup(args)
        if (why := several_to_judge(goal, "a tune")) is not None:
            raise GoalError(why)
        tries = tuple(format_spec(parse_spec(item)) for item in args.tries)
        options = TuneOptions(
            ab_options(args, goal), profile, profile.reference, args.baseline_boots, args.max_boots,
            parse_effect(args.effect), args.keep_going, tries, args.max_steps)
        if args.max_boots < 3 or args.baseline_boots < 2 or (args.max_steps or 1) < 1:
            raise ValueError("--max-boots must be 3 or more, --baseline-boots 2 or more and "
                             "--max-steps 1 or more")
        state = _state(args, abrun.goal_milestone(goal))
    except (ProfileError, GoalError, SettingsError, SpecError, TuneStateError,
            ValueError) as error:
        return fail(str(error), BAD_INPUT)
    if args.restore and not state.env_backup:
        return fail(f"tune {state.name!r} changed nothing on {args.port}: nothing to restore",
                    BAD_INPUT)
    if state.finished and not args.restore:
        _print_result(state, profile)
        say(f"tune {state.name!r} is finished (above); --restore undoes it, another --name "
             "tunes again")
        return OK
    if state.env_backup and not args.restore:
        say(f"resuming tune {state.name!r} (`bootlab tune {args.port} --name {state.name} "
             "--restore` undoes its changes instead)")
    meta = {"board": args.board, "port": args.port, "baud": args.baud,
            "profile": profile.name, "label": "setup"}
    session = open_bench(args, profile, meta)
    if isinstance(session, int):
        return session
    code = OK
    try:
        if args.restore:
            sent = restore(session.bench, state)
            for command in sent:
                say(f"sent: {command}")
            say("the environment is as the tune found it" if sent else
                 "the environment was already as the tune found it")
            return OK
        run_tune(session.bench, state, settings, lambda env: board_facts(args, env), options,
                 _progress)
    except SettingRefused as error:
        code = fail(f"{error} (run the same command again to resume)", BAD_INPUT)
    except KeyboardInterrupt:
        code = cancelled(session.bench)
    except (UBootError, ShellError, ConsoleTimeout, RuntimeError) as error:
        code = fail(f"{error} (run the same command again to resume, or --restore)", NOT_MET)
    except PortError as error:
        code = fail(f"{error} (run the same command again to resume, or --restore)",
                    PORT_FAILED)
    finally:
        session.recorder.finish()
        session.close()
    if code == OK:
        final = _print_result(state, profile)
        if state.budget_s is not None and (final is None or final > state.budget_s):
            reached = "not reached" if final is None else f"at {final:.3f} s"
            say(f"the budget is not met: {state.goal} {reached}, budget {state.budget_s:g} s")
            code = NOT_MET
    return code


def _progress(event: TuneEvent | abrun.ABEvent) -> None:
    """A tune's progress on stderr."""
    match event:
        case TuneBaseline(boots, median_s):
            say(f"baseline: {boots} boots, median {median_s:.3f} s")
        case TuneRanked(candidates):
            say("candidates: " + ("; ".join(f"{setting} ({title}, {ms:.0f} ms predicted)"
                                             for setting, title, ms in candidates) or "none"))
        case TuneStepStarted(step):
            say(f"step: A/B {step.setting} against the kept settings ({step.ab_name})")
        case TuneStepDone(step):
            say(f"step {step.setting}: {step.outcome}: {step.why}")
        case TuneFinished(state):
            say(f"stopped: {state.stopped_why}")
        case _:
            say_progress(event)


def _print_result(state: TuneState, profile: Profile) -> float | None:
    """The tune's result on stdout: before and after, each step, the rebuild list, and the
    commands that set the final configuration by hand; returns the goal's final median."""
    folder = state.path.parent
    goal = Goal((state.goal,))
    before = median_s(folder, state.baseline, profile, profile.reference, goal)
    after = median_s(folder, state.final, profile, profile.reference, goal) \
        if state.final else before
    out = [f"tune {state.name} on {state.port} (goal {state.goal}): "
           + (state.stopped_why or "not finished")]
    if before is not None and after is not None:
        out.append(f"before {before:.3f} s ({len(state.baseline)} boots), after {after:.3f} s"
                   f" ({len(state.final or state.baseline)} boots): cut {before - after:.3f} s")
    for step in state.steps:
        figures = "" if step.saving_ms is None else \
            f" {step.saving_ms:.0f} ms [{step.low_ms:.0f}, {step.high_ms:.0f}], " \
            f"{step.boots} boots each;"
        out.append(f"  {step.outcome:9} {step.setting}:{figures} {step.why}")
    out += [f"  needs a rebuild: {title} ({ms:.0f} ms predicted)" for title, ms in state.rebuild]
    out.append("kept: " + (state.spec() or "nothing"))
    if state.commands:
        out += ["to set it by hand (at the U-Boot prompt):", *(f"  {c}" for c in state.commands)]
    sys.stdout.write("".join(f"{line}\n" for line in out))
    return after
