"""The board jobs the app runs: reboot now, apply the pending settings and boot, an A/B run,
a tune.

A job is a function of a `Bench` (bootlab/control/engine.py) that the live port's worker
thread runs between its own reads (`LiveLink.submit`), so the console keeps streaming and
every byte keeps being recorded while bootlab drives the board. Each job starts a setup
session (role "setup": finding where the board is, rebooting, stopping autoboot, `printenv`,
`setenv`); a measured boot gets its own session from the moment the boot or reset command is
typed, as `bootlab boot` does. Jobs report progress with messages and return their result in
words; `failure_text` turns what can go wrong into a sentence saying what to do. With `collect`
each measured boot's dmesg is read after its goal (`bootlab boot --collect`) and posted joined
to the boot (`session.collected`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from bootlab.control import abrun
from bootlab.control.abverify import NotInForce
from bootlab.control.board_console import ConsoleTimeout
from bootlab.control.engine import Bench
from bootlab.control.linux import ShellError
from bootlab.control.linuxedit import LinuxRoute
from bootlab.control.planning import (
    PlanOptions,
    RunPlan,
    SettingRefused,
    file_lines,
    file_plan,
    plan_run,
    variant_plan,
)
from bootlab.control.promptedit import PromptRoute
from bootlab.control.routes import open_route, restore_outstanding
from bootlab.control.tuneloop import TuneOptions, run_tune
from bootlab.control.uboot import UBootError
from bootlab.core.advice.recommendation import Recommendation
from bootlab.core.analysis.goals import Goal, goal_meta
from bootlab.core.analysis.profiles import Profile
from bootlab.core.analysis.sequential import DEFAULT_EFFECT_S
from bootlab.core.board.abplan import ABStateError, load_or_create, numbered_name, parse_spec
from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.plan import Plan
from bootlab.core.board.settings import Setting, State
from bootlab.core.board.tuneplan import (
    TuneBaseline,
    TuneRanked,
    TuneState,
    TuneStateError,
    TuneStepDone,
    TuneStepStarted,
    state_path,
)
from bootlab.core.files.atomic import write_atomic
from bootlab.core.render.tune_report import load_tune_report, render, summary_lines
from bootlab.session.collected import collected_boot
from bootlab.session.events import (
    ABFinished,
    ABLooked,
    ABProgressed,
    ArgSourceFound,
    EnvRead,
    JobNote,
    Post,
    SettingsApplied,
    TuneEnded,
    TuneProgressed,
)
from bootlab.transports.errors import PortError


@dataclass(frozen=True)
class BoardJob:
    """A job for the live port's thread: `run` drives the bench and returns its result."""

    title: str
    run: Callable[[Bench], str]


@dataclass(frozen=True)
class Board:
    """What the jobs know of the board and the bench (handed down by the main screen)."""

    settings: tuple[Setting, ...]
    facts: BoardFacts
    """What the log showed (and the environment, once read)."""
    profile: Profile
    folder: Path
    """The sessions folder (A/B state files go there too)."""
    label: str = ""
    goal: Goal = field(default_factory=Goal)
    """What measured boots are followed to (its milestone is in `profile`)."""
    timeout_s: float = 120.0
    source: ArgSource | None = None
    """Where the kernel's arguments come from, once a job found it."""
    route: str | None = None
    """How a boot file carries them ("prompt", "linux"; None: the environment does)."""
    collect: bool = False
    """What the dialogs offer: read each measured boot's dmesg after its goal (a login is
    configured)."""


class PlanChanged(Exception):
    """The board's environment gives other commands than the ones shown; nothing was sent."""


def needs_persist(settings: Sequence[Setting], chosen: Mapping[str, State]) -> bool:
    """Whether the choices act before the U-Boot prompt (then only saveenv and reset show)."""
    return any(s.id in chosen and s.before_prompt for s in settings)


def apply_plan(board: Board, chosen: Mapping[str, State], persist: bool,
               env: Mapping[str, str] | None = None, from_linux: bool = False
               ) -> tuple[Plan, list[str]]:
    """The plan of the choices and what it sends, as the preview lists it: the exact commands,
    a boot file's edit (once a job found that a file carries the kernel's arguments), and
    `saveenv` last if persisting; against `env` or else the environment known.

    Raises:
        ValueError: a choice names an unknown setting.
    """
    known = board.facts.env if env is None else dict(env)
    spec = parse_spec(abrun.choices_spec(board.settings, chosen)[1])
    planned = variant_plan(board.settings, spec, known, board.facts.with_env(known), (),
                           board.source)
    route = "linux" if from_linux and board.route in ("prompt", "linux", "linux only") else \
        board.route if board.route == "prompt" else None
    if route is not None and board.source is not None and planned[0].refused:
        planned = file_plan(planned, spec, board.source)
    the_plan, commands, _ = planned
    return the_plan, [*commands, *file_lines(the_plan, board.source, route),
                      *(["saveenv"] if persist else [])]


def _found(post: Post, run: RunPlan | None) -> None:
    """Tell the screen where the kernel's arguments come from, once a job found it (its
    previews then show the file's edit, and the dialogs offer the route that works)."""
    if run is not None and run.source is not None:
        post(ArgSourceFound(run.source, run.route_name()))


def _planned(post: Post, plan: Callable[[], RunPlan]) -> RunPlan:
    """A job's plan (`planning.plan_run`), its findings told to the screen, refused or not."""
    try:
        run = plan()
    except SettingRefused as error:
        _found(post, error.run)
        raise
    _found(post, run)
    return run


def _boot_meta(board: Board) -> dict[str, object]:
    return {"label": board.label}


def post_collected(post: Post, session: Path, profile: Profile) -> None:
    """Post a measured boot's collected dmesg (or a goal asked after login), joined to it,
    when its session holds one."""
    found = collected_boot(session, profile)
    if found is not None:
        post(found)


def reboot_job(board: Board) -> BoardJob:
    """Reboot the board now: reset at U-Boot, `reboot -f` at a shell (logging in first), or
    the reboot strategy's own way; the boot is recorded from the command on."""

    def run(bench: Bench) -> str:
        bench.setup_session(label="setup")
        how = bench.restart({**_boot_meta(board), "goal": goal_meta(board.goal)})
        return f"rebooted: {how}; the boot is recorded from there, to {board.goal.name}"

    return BoardJob("reboot", run)


def apply_job(board: Board, chosen: Mapping[str, State], persist: bool,
              shown: Sequence[str], post: Post, from_linux: bool = False,
              collect: bool = False) -> BoardJob:
    """Apply the pending choices at the next boot and measure it.

    Reaches the U-Boot prompt, reads the environment, plans as `bootlab boot` does (a setup
    boot first where facts are missing; a refusal when a choice cannot be put in force), sends
    exactly `shown` (refusing if the board now gives other commands), edits a boot file where
    one carries the kernel's arguments (at the prompt, or from Linux with `from_linux`), then
    `boot`s (or, persisting, resets; from Linux, reboots) and follows the boot to its goal;
    with `collect`, logs in and reads its dmesg.
    """
    title = "apply and boot"

    def run(bench: Bench) -> str:
        bench.setup_session(label="setup")
        bench.find_state()
        env = bench.printenv()
        post(EnvRead(env))
        spec = parse_spec(abrun.choices_spec(board.settings, chosen)[1])
        planned = _planned(post, lambda: plan_run(
            bench, {"apply": spec}, board.settings, env, board.facts.with_env(env),
            PlanOptions(from_linux=from_linux, persist=persist, goal=board.goal,
                        timeout_s=board.timeout_s), lambda text: post(JobNote(title, text))))
        the_plan, commands, _ = planned.plans["apply"]
        sent = [*commands, *file_lines(the_plan, planned.source, planned.route),
                *(["saveenv"] if planned.persist else [])]
        if sent != list(shown):
            raise PlanChanged("; ".join(sent) or "nothing")
        route = open_route(bench, planned)
        if planned.started and not isinstance(route, PromptRoute):
            bench.fresh_prompt()
        post(JobNote(title, "sending: " + ("; ".join(sent) or "nothing")))
        if isinstance(route, PromptRoute):
            route.apply(the_plan.file_edits)
        bench.apply([*commands, *(["saveenv"] if planned.persist else [])], persist=False,
                    baud=the_plan.baud)
        post(SettingsApplied(the_plan.env_after, planned.persist))
        post(JobNote(title, "booting: " + ("reset (saved settings)" if planned.persist else
                                          bench.uboot.options.boot_command)))
        arguments = planned.arguments()
        result = bench.boot({**_boot_meta(board), "settings": the_plan.record,
                             **({} if arguments is None else {"arguments": arguments})},
                            planned.persist, board.goal, board.timeout_s,
                            from_linux=from_linux,
                            at_shell=partial(route.apply, the_plan.file_edits)
                            if isinstance(route, LinuxRoute) else None, collect=collect)
        if (collect or board.goal.after_login) and result.reached:
            bench.console.recorder.writer.flush(sync=True)
            post_collected(post, Path(result.path), board.profile)
        if route is not None:
            bench.console.recorder.writer.flush(sync=True)
            bench.setup_session(label="restore")
            restore_outstanding(bench, route.state_file, lambda text: post(JobNote(title, text)),
                                "the boot is measured")
        goal_s = abrun.goal_seconds(result, board.goal)
        name = Path(result.path).name
        if goal_s is None:
            why = result.untimed or board.goal.missed(result.milestones, board.timeout_s)
            return f"{board.goal.name}: {why}; see {name}"
        start = "the reset" if planned.persist else "the boot command"
        return f"booted: {board.goal.name} {goal_s:.3f} s after {start} ({name})"

    return BoardJob(title, run)


def ab_progress(post: Post, collected: Profile | None = None) -> Callable[[object], None]:
    """What an A/B run's events post: each boot as it starts (with how the last one ended),
    each look of a run until decided, and (given the profile, when boots collect their dmesg)
    each boot's collected dmesg."""
    last: list[str] = []

    def progress(event: object) -> None:
        if isinstance(event, abrun.BootStarting):
            post(ABProgressed(event, last[-1] if last else None))
        elif isinstance(event, abrun.BootFinished):
            at = "not reached" if event.goal_s is None else f"at {event.goal_s:.3f} s"
            last.append(f"{event.variant}: {event.goal} {at}")
            if collected is not None and event.reached:
                post_collected(post, event.session, collected)
        elif isinstance(event, abrun.LookJudged):
            post(ABLooked(event))

    return progress


def ab_job(board: Board, variants: Sequence[tuple[str, str]], boots: int, persist: bool,
           post: Post, recommendation: Recommendation | None = None,
           until_effect_s: float | None = None, from_linux: bool = False,
           collect: bool = False) -> BoardJob:
    """An A/B run of the variants (the first is the baseline), `boots` each, interleaved, or
    with `until_effect_s` until decided with `boots` as the budget (`abrun.judge_look`);
    resumes an unfinished run of the same variants; with `collect`, each boot's dmesg is read
    after its goal. Posts its progress, each look and its report."""
    stem = variants[-1][0]
    title = f"A/B {stem}"

    def run(bench: Bench) -> str:
        name = abrun.run_name(board.folder, stem, variants, boots, until_effect_s)
        state = load_or_create(board.folder, name, variants, boots,
                               until_effect_s=until_effect_s)
        if state.done:
            post(JobNote(title, f"resuming {name}: {len(state.done)} of {state.total} boots "
                                "done"))
        bench.setup_session(label="setup")
        bench.find_state()
        progress = ab_progress(post, board.profile if collect or board.goal.after_login else None)
        options = abrun.ABOptions(persist, board.goal, board.timeout_s, from_linux=from_linux,
                                  collect=collect)
        reference = board.profile.reference
        try:
            abrun.run_ab(bench, state, board.settings, board.facts.with_env, options, progress,
                         lambda s: abrun.judge_look(s, board.profile, reference, board.goal))
        except SettingRefused as error:
            _found(post, error.run)
            raise
        report = abrun.report(state, board.profile, reference, board.settings, board.goal,
                              until_effect_s or DEFAULT_EFFECT_S)
        post(ABFinished(report, recommendation))
        return f"A/B {name} done: {state.total} boots ({state.path.name})"

    return BoardJob(title, run)


STEP_BOOTS = 8
"""Boots per variant a tune's step may use at most, unless changed (as `bootlab tune`)."""


@dataclass(frozen=True)
class TuneChoice:
    """How the app's tune runs (`bootlab tune`'s options of the same names)."""

    persist: bool = False
    budget_s: float | None = None
    """Stop once the goal's median is at or below this (None: cut as far as it can)."""
    max_hours: float | None = None
    max_steps: int | None = None
    max_boots: int = STEP_BOOTS
    tries: tuple[str, ...] = ()
    """Spec items tested first, before the recommendations."""
    keep_going: bool = False
    collect: bool = False
    """Read each boot's dmesg after its goal (`--collect`)."""


TUNE_STEM = "app"
"""The app's tunes are `tune-app-N.json` (the CLI's default is `tune-tune.json`)."""


def tune_name(folder: Path) -> str:
    """The app's tune to run: the first unfinished `app-N` (it is resumed), else a new one."""

    def unfinished(path: Path) -> bool:
        try:
            return not TuneState.load(path).finished
        except TuneStateError:
            return False  # an unreadable state is left alone: the next number is used

    return numbered_name(TUNE_STEM, partial(state_path, folder), unfinished)


def tune_job(board: Board, port: str, choice: TuneChoice, post: Post,
             baseline_boots: int = 3) -> BoardJob:
    """Tune the board (`control.tuneloop.run_tune`) to its goal as `choice` says: resumes the
    app's unfinished tune (with its own budget), else starts one. Posts each step as it starts
    and is decided, each A/B boot and look, and at the end the result and the HTML report
    written beside the state (`tune-app-N.html`)."""
    title = "tune"

    def run(bench: Bench) -> str:
        path = state_path(board.folder, tune_name(board.folder))
        state = TuneState.load(path) if path.exists() else TuneState(
            path, path.stem.removeprefix("tune-"), port, abrun.goal_milestone(board.goal),
            choice.budget_s, choice.max_hours, choice.persist)
        if state.steps or state.baseline:
            post(JobNote(title, f"resuming {path.name}: {len(state.steps)} steps done"))
        bench.setup_session(label="setup")
        bench.find_state()
        ab_events = ab_progress(post, board.profile if choice.collect or board.goal.after_login
                                else None)

        def progress(event: object) -> None:
            if isinstance(event, TuneStepStarted | TuneStepDone):
                post(TuneProgressed(type(event)(replace(event.step))))
            elif isinstance(event, TuneBaseline | TuneRanked):
                post(TuneProgressed(event))
            else:
                ab_events(event)

        options = TuneOptions(abrun.ABOptions(state.persist, board.goal, board.timeout_s,
                                              collect=choice.collect),
                              board.profile, board.profile.reference, baseline_boots,
                              choice.max_boots, keep_going=choice.keep_going,
                              tries=choice.tries, max_steps=choice.max_steps)
        try:
            run_tune(bench, state, board.settings, board.facts.with_env, options, progress)
        except Exception:
            post(TuneEnded("the tune stopped before its end (the notification says why); "
                           "starting it again resumes it"))
            raise
        report = path.with_suffix(".html")
        tuned = load_tune_report(state)
        write_atomic(report, render(tuned, "html"))
        post(TuneEnded(state.stopped_why, tuple(summary_lines(tuned)), report))
        return f"tune {state.name} done: {state.stopped_why}; report {report.name}"

    return BoardJob(title, run)


def failure_text(title: str, error: Exception) -> str:
    """What went wrong in a job, and what to do about it."""
    if isinstance(error, PlanChanged):
        return (f"{title}: nothing was sent: the board gives other commands than the ones "
                f"shown ({error}); the settings pane now shows them: press P again to review "
                "and send them (the board waits at its U-Boot prompt)")
    if isinstance(error, SettingRefused):
        here = "; in the dialog, tick «edit the boot file from Linux» for that" \
            if "--from-linux" in str(error) else ""
        return f"{title}: nothing was measured: {error}{here}"
    if isinstance(error, UBootError | ConsoleTimeout):
        return (f"{title}: {error}. Check that the board is powered and on this port at this "
                "baud rate, then try again")
    if isinstance(error, ShellError):
        return f"{title}: {error}. Log in by hand in the console, then try again"
    if isinstance(error, PortError):
        return (f"{title}: {error}. When the port is back (see the status line), try again; "
                "an A/B run resumes where it stopped")
    if isinstance(error, subprocess.CalledProcessError | subprocess.TimeoutExpired):
        return f"{title}: the power command failed ({error}); check --power-cmd"
    if isinstance(error, ABStateError | TuneStateError | ValueError):
        return f"{title}: {error}"
    if isinstance(error, NotInForce):
        return f"{title} stopped, a setting was not as its variant says: {error}"
    if isinstance(error, OSError):
        return (f"{title}: {error} (check --power-cmd, and that the sessions folder can be "
                "written)")
    if isinstance(error, RuntimeError):
        return (f"{title}: {error}. Check the setting (bootlab settings) or type the command "
                "by hand at the U-Boot prompt")
    return f"{title} stopped: {error!r}"
