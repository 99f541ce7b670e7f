"""The board jobs the app runs: reboot now, apply the pending settings and boot, an A/B run.

A job is a function of a `Bench` (bootlab/control/engine.py) that the live port's worker
thread runs between its own reads (`LiveLink.submit`), so the console keeps streaming and
every byte keeps being recorded while bootlab drives the board. Each job starts a setup
session (role "setup": finding where the board is, rebooting, stopping autoboot, `printenv`,
`setenv`); a measured boot gets its own session from the moment the boot or reset command is
typed, as `bootlab boot` does. Jobs report progress with messages and return their result in
words; `failure_text` turns what can go wrong into a sentence saying what to do.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bootlab.control import abrun
from bootlab.control.console import ConsoleTimeout
from bootlab.control.engine import Bench
from bootlab.control.linux import ShellError
from bootlab.control.uboot import UBootError
from bootlab.core.abplan import ABStateError, load_or_create
from bootlab.core.advice import Recommendation
from bootlab.core.profiles import Profile
from bootlab.core.settings import BoardFacts, Plan, Setting, State, plan
from bootlab.transports.errors import PortError
from bootlab.ui.feed import Post
from bootlab.ui.messages import ABFinished, ABProgressed, EnvRead, JobNote, SettingsApplied

PERSIST_VARS = frozenset({"bootdelay", "silent"})
"""U-Boot variables read before its prompt: only a saved environment and a reset show them."""


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
    until: str = "login"
    timeout_s: float = 120.0


class PlanChanged(Exception):
    """The board's environment gives other commands than the ones shown; nothing was sent."""


def needs_persist(settings: Sequence[Setting], chosen: Mapping[str, State]) -> bool:
    """Whether the choices act before the U-Boot prompt (then only saveenv and reset show)."""
    return any(s.id in chosen and s.var in PERSIST_VARS for s in settings)


def apply_plan(board: Board, chosen: Mapping[str, State], persist: bool,
               env: Mapping[str, str] | None = None) -> tuple[Plan, list[str]]:
    """The plan of the choices and the exact commands it sends (`saveenv` last if persisting),
    against `env` or else the environment known.

    Raises:
        ValueError: a choice names an unknown setting.
    """
    known = board.facts.env if env is None else dict(env)
    the_plan = plan(board.settings, chosen, known, board.facts.with_env(known))
    return the_plan, [*the_plan.commands, *(["saveenv"] if persist else [])]


def _boot_meta(board: Board) -> dict[str, object]:
    return {"label": board.label}


def reboot_job(board: Board) -> BoardJob:
    """Reboot the board now: reset at U-Boot, `reboot -f` at a shell (logging in first), or
    the reboot strategy's own way; the boot is recorded from the command on."""

    def run(bench: Bench) -> str:
        bench.setup_session(label="setup")
        how = bench.restart(dict(_boot_meta(board)))
        return f"rebooted: {how}; the boot is recorded from there"

    return BoardJob("reboot", run)


def apply_job(board: Board, chosen: Mapping[str, State], persist: bool,
              shown: Sequence[str], post: Post) -> BoardJob:
    """Apply the pending choices at the next boot and measure it.

    Reaches the U-Boot prompt, reads the environment, sends exactly `shown` (refusing if the
    environment now gives other commands), then `boot`s (or, persisting, resets) and follows
    the boot to its goal.
    """
    title = "apply and boot"

    def run(bench: Bench) -> str:
        bench.setup_session(label="setup")
        bench.find_state()
        env = bench.printenv()
        post(EnvRead(env))
        the_plan, commands = apply_plan(board, chosen, persist, env)
        if commands != list(shown):
            raise PlanChanged("; ".join(commands) or "nothing")
        post(JobNote(title, "sending: " + ("; ".join(commands) or "nothing")))
        bench.apply(commands, persist=False, baud=the_plan.baud)
        post(SettingsApplied(the_plan.env_after, persist))
        post(JobNote(title, "booting: " + ("reset (saved settings)" if persist else
                                          bench.uboot.options.boot_command)))
        result = bench.boot({**_boot_meta(board), "settings": the_plan.record}, persist,
                            board.until, board.timeout_s)
        goal_s = abrun.goal_seconds(result, board.until)
        name = Path(result.path).name
        if goal_s is None:
            return f"{board.until} not reached within {board.timeout_s:.0f} s; see {name}"
        start = "the reset" if persist else "the boot command"
        return f"booted: {board.until} {goal_s:.3f} s after {start} ({name})"

    return BoardJob(title, run)


def ab_job(board: Board, variants: Sequence[tuple[str, str]], boots: int, persist: bool,
           post: Post, recommendation: Recommendation | None = None) -> BoardJob:
    """An A/B run of the variants (the first is the baseline), `boots` each, interleaved;
    resumes an unfinished run of the same variants. Posts its progress and its report."""
    stem = variants[-1][0]
    title = f"A/B {stem}"

    def run(bench: Bench) -> str:
        name = abrun.run_name(board.folder, stem, variants, boots)
        state = load_or_create(board.folder, name, variants, boots)
        if state.done:
            post(JobNote(title, f"resuming {name}: {len(state.done)} of {state.total} boots "
                                "done"))
        bench.setup_session(label="setup")
        bench.find_state()
        last: list[str] = []

        def progress(event: abrun.ABEvent) -> None:
            if isinstance(event, abrun.BootStarting):
                post(ABProgressed(event, last[-1] if last else None))
            elif isinstance(event, abrun.BootFinished):
                at = "not reached" if event.goal_s is None else f"at {event.goal_s:.3f} s"
                last.append(f"{event.variant}: {event.goal} {at}")

        options = abrun.ABOptions(persist, board.until, board.timeout_s)
        abrun.run_ab(bench, state, board.settings, board.facts.with_env, options, progress)
        report = abrun.report(state, board.profile, board.profile.reference)
        post(ABFinished(report, recommendation))
        return f"A/B {name} done: {state.total} boots ({state.path.name})"

    return BoardJob(title, run)


def failure_text(title: str, error: Exception) -> str:
    """What went wrong in a job, and what to do about it."""
    if isinstance(error, PlanChanged):
        return (f"{title}: nothing was sent: the board's environment gives other commands "
                f"than the ones shown ({error}); the settings pane now shows them: press P "
                "again to review and send them (the board waits at its U-Boot prompt)")
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
    if isinstance(error, ABStateError | ValueError):
        return f"{title}: {error}"
    if isinstance(error, OSError):
        return (f"{title}: {error} (check --power-cmd, and that the sessions folder can be "
                "written)")
    if isinstance(error, RuntimeError):
        return (f"{title}: {error}. Check the setting (bootlab settings) or type the command "
                "by hand at the U-Boot prompt")
    return f"{title} stopped: {error!r}"
