"""A/B runs on an open bench: the loop `bootlab ab` and the app share, and its report.

`run_ab` boots the runs of an `ABState` (bootlab/core/board/abplan.py) in their planned order.
Before each boot the U-Boot variables any variant touches are brought to that variant's values
(`setenv`, then `saveenv` when persisting); a boot that reaches its goal is checked against its
variant (`abverify`: each setting in force, or not, as the variant says), closed "done" and
marked in the state file, one that does not is booted again later. With `persist` the board's
environment is put back at the end. Several benches (identical boards) boot the run in parallel,
one thread each, each round on one board (`abspread`), the statistics then blocked by board
(`stats.by_board`). Progress goes to a callback as events, so the command line
prints lines and the app moves its progress bar; `report` turns the done sessions into
per-milestone statistics against the first variant, with how each variant's settings were
verified. What each variant sends and its boots must show is `abvariants`; the power table
before an `--until-decided` run, from the boots recorded on the bench, is `abpower`.

The app also needs `choices_spec` (its pending settings as a variant spec) and `run_name` (which
state file a run from the app uses: an unfinished one with the same variants is resumed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from bootlab.control.abspread import Spread, in_parallel
from bootlab.control.abvariants import sync_commands, variant_claims
from bootlab.control.abverify import NotInForce, settle, verify_boot
from bootlab.control.board_console import ConsoleTimeout
from bootlab.control.engine import Bench, BootResult, Probe
from bootlab.control.linux import ShellError
from bootlab.control.linuxedit import LinuxRoute
from bootlab.control.planning import PlanOptions, file_lines, plan_run
from bootlab.control.promptedit import PromptRoute
from bootlab.control.routes import Route, open_route, restore_outstanding
from bootlab.control.uboot import UBootError
from bootlab.core.advice.predictions import ABBoot, ab_boots
from bootlab.core.analysis import compare, sequential
from bootlab.core.analysis.goals import Goal
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.profiles import STAGES, Profile
from bootlab.core.board.abplan import (
    ABState,
    ABStateError,
    SpecItem,
    acts_from,
    format_spec,
    numbered_name,
    parse_spec,
    state_path,
)
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.settings import Setting, State
from bootlab.core.board.verify import Check, recorded_checks, summary_lines
from bootlab.core.capture.session import board_of
from bootlab.core.capture.sources import open_source


@dataclass(frozen=True)
class ABOptions:
    """How each boot of an A/B run is made and measured."""

    persist: bool
    """saveenv and reset (the autoboot is measured), instead of setenv and `boot`."""
    goal: Goal = field(default_factory=Goal)
    """What each boot is measured to."""
    timeout_s: float = 120.0
    login: bool = False
    """Log in after the goal (for `commands` and `probes`)."""
    probes: tuple[Probe, ...] = ()
    commands: tuple[str, ...] = ()
    from_linux: bool = False
    force: tuple[str, ...] = ()
    collect: bool = False
    """Log in after the goal and read the boot's dmesg into its session (`control.collect`)."""


@dataclass(frozen=True)
class VariantPlanned:
    """What a variant sends at the first boot (from the environment read at the start)."""

    variant: str
    commands: tuple[str, ...]
    warnings: tuple[str, ...]
    board: str = ""
    """The board it is planned for, in a run over several ('' with one)."""


@dataclass(frozen=True)
class BootStarting:
    """A run is about to boot: the `number`th boot of `total`."""

    number: int
    total: int
    variant: str
    run: int
    runs: int
    """Boots per variant."""
    text: str
    """`boot 3/10: quiet, run 2 of 5`."""
    board: str = ""
    """The board it boots on, in a run over several ('' with one)."""


@dataclass(frozen=True)
class BootFinished:
    """A run has booted (or missed its goal and will be booted again)."""

    variant: str
    run: int
    reached: bool
    goal: str
    """The goal in words (`login`, `goal 'display on'`)."""
    goal_s: float | None
    """Seconds from the boot or reset command to the goal milestone."""
    session: Path
    board: str = ""
    """The board it booted on, in a run over several ('' with one)."""
    incomplete: str | None = None
    """It reached its goal but bytes were lost on the way (a gap): booted again."""


@dataclass(frozen=True)
class LookJudged:
    """An `--until-decided` run was judged after a round (`judge_look`)."""

    number: int
    """1 for the first look."""
    boots: int
    """Boots per variant so far."""
    lines: tuple[str, ...]
    """Each variant's interval and verdict: `quiet: look 2 (5 boots each, 99.4% CI): ...`."""
    decided: bool
    """The run stops here with a verdict."""
    final: bool
    """The run stops here: decided, or the budget is spent."""


@dataclass(frozen=True)
class BoardFailed:
    """A board of a run over several failed: every board stops, and the failure is raised."""

    board: str
    error: str


ABEvent = VariantPlanned | BootStarting | BootFinished | LookJudged | BoardFailed


def goal_seconds(result: BootResult, goal: Goal) -> float | None:
    """When a measured boot reached its goal, in seconds from its start."""
    reached = goal.reached(result.milestones)
    return None if reached is None else reached.host_s


def run_ab(benches: Bench | Sequence[Bench], state: ABState, settings: Sequence[Setting],
           facts_of: Callable[[dict[str, str]], BoardFacts], options: ABOptions,
           progress: Callable[[ABEvent], None],
           judge: Callable[[ABState], LookJudged | None] | None = None) -> None:
    """Boot every run of `state` not done yet, marking each done as it reaches its goal; an
    `--until-decided` run is judged (`judge`) whenever the rounds up to a look are done, and
    goes on to the next look or stops.

    Several benches (identical boards, each its own port) boot in parallel, one thread each,
    each round on one board (`abspread`); the state records each boot's board and the events
    name it. One bench boots in the calling thread, its events untagged.

    Args:
        benches: the bench, or the benches of several boards; any state (each is brought to
            its bootloader). A board is named by its session header (`session.board_of`).
        state: the run's plan and progress (saved after every boot).
        settings: the settings model.
        facts_of: a board's facts for its environment (what the log showed, plus it).
        options: how boots are made and measured.
        progress: told of each step (from the boards' threads when several).
        judge: judges the look due, if any (`judge_look`); None: never judged.

    Raises:
        UBootError, ShellError, ConsoleTimeout, RuntimeError, PortError: a board did not
            cooperate (the first board's failure, after the others stopped); the state keeps
            what was done, so the run can be resumed.
        SettingRefused: a variant's setting cannot be applied on a board (nothing booted there).
        NotInForce: a boot showed a setting against its variant (`abverify.settle`).
        ValueError: two benches carry the same board name.
        KeyboardInterrupt: Ctrl-C, once every board has stopped.
    """
    group = [benches] if isinstance(benches, Bench) else list(benches)
    named = {board_of(bench.console.recorder.meta): bench for bench in group}
    spread = Spread(state, [board_of(bench.console.recorder.meta) for bench in group])
    if judge is not None and (resumed := judge(state)) is not None:   # a look due on resume
        progress(resumed)
    tagged = len(group) > 1

    def work(board: str, bench: Bench) -> None:
        _boot_board(bench, board if tagged else "", board, spread, settings, facts_of, options,
                    progress, judge)

    if not tagged:
        work(*next(iter(named.items())))
        return
    in_parallel(named, spread, work,
                lambda board, error: progress(BoardFailed(board, str(error) or
                                                          type(error).__name__)))


def _boot_board(bench: Bench, tag: str, board: str, spread: Spread, settings: Sequence[Setting],
                facts_of: Callable[[dict[str, str]], BoardFacts], options: ABOptions,
                progress: Callable[[ABEvent], None],
                judge: Callable[[ABState], LookJudged | None] | None) -> None:
    """One board's share of a run: plan the variants for its environment, boot the runs
    `spread` gives it, and put its environment (and an edited file) back at the end."""
    state = spread.state
    env = bench.printenv()
    specs = {name: parse_spec(spec) for name, spec in state.variants.items()}
    planned = plan_run(bench, specs, settings, env, facts_of(env), PlanOptions(
        options.force, options.from_linux, options.persist, options.goal, options.timeout_s),
        bench.say)
    plans, source, persist, baseline = planned.plans, planned.source, planned.persist, \
        planned.env
    route = open_route(bench, planned)
    arguments = {} if planned.arguments() is None else {"arguments": planned.arguments()}
    if planned.started and (route is None or route.kind != "prompt"):
        bench.fresh_prompt()  # a device started to read a file: each boot starts alike
    touched = sorted({var for _, _, target in plans.values() for var in set(target) | set(baseline)
                      if target.get(var) != baseline.get(var)})
    for name, (the_plan, commands, _) in plans.items():
        edits = file_lines(the_plan, source, planned.route)
        progress(VariantPlanned(name, (*commands, *edits), tuple(the_plan.warnings), tag))
    if route is not None and source is not None:
        bench.say(f"{source.describe()}: the file is edited for each boot "
                  f"{'at the U-Boot prompt' if route.kind == 'prompt' else 'from Linux'} "
                  "and restored the same way at the end")
    claims = variant_claims(settings, specs, plans)
    recorder = bench.console.recorder
    while (claimed := spread.claim(board)) is not None:
        (variant, run), number = claimed
        progress(BootStarting(number, state.total, variant, run, state.boots,
                              state.progress((variant, run), number), tag))
        the_plan, _, target = plans[variant]
        if isinstance(route, PromptRoute):
            route.apply(the_plan.file_edits)
        sync = sync_commands(bench.printenv(), target, touched)
        if persist and sync:  # nothing changed: nothing to save (nor a saveenv to have)
            sync.append("saveenv")
        bench.apply(sync, persist=False, baud=the_plan.baud)
        result = bench.boot({**state.session_meta(variant, run, board),
                             "settings": the_plan.record, **arguments},
                            persist, options.goal, options.timeout_s,
                            login=options.login, probes=options.probes,
                            commands=options.commands, from_linux=options.from_linux,
                            at_shell=partial(route.apply, the_plan.file_edits)
                            if isinstance(route, LinuxRoute) else None, collect=options.collect)
        checks = None
        incomplete = recorder.incomplete
        if result.reached and incomplete is None:
            checks, log = verify_boot(bench, result, claims[variant], the_plan.baud)
            writer = recorder.writer
            writer.event("end", time.monotonic_ns() - writer.start_ns, reason="done")
            writer.flush(sync=True)  # a look (on any board's thread) reads this boot's session
        look = None
        with spread.lock:
            try:
                if checks is not None:
                    settle(state, variant, run, Path(result.path).name, checks, log, target,
                           source, board)
            except NotInForce:
                if route is not None:
                    _restore_or_say(bench, route, "the run stopped")
                raise
            finally:
                spread.booted(board, (variant, run))
            if judge is not None and state.due_look() is not None:
                look = judge(state)
        if persist or route is not None or state.next_run() is not None \
                or spread.others_busy(board):
            # The setup dialogue that follows (the next boot's, or the edited file's restore
            # after the last) is no A/B boot: its session has no A/B tag.
            bench.setup_session(label="setup", ab=None)
        progress(BootFinished(variant, run, result.reached, options.goal.name,
                              goal_seconds(result, options.goal), Path(result.path), tag,
                              incomplete))
        if look is not None:
            progress(look)
    if route is not None:
        restore_outstanding(bench, route.state_file, bench.say, "the run is over")
    if persist:
        restore = sync_commands(bench.printenv(), baseline, touched)
        bench.apply([*restore, "saveenv"] if restore else [], persist=False)
    recorder.writer.flush(sync=True)  # the last boot's session may still be the open one


def _restore_or_say(bench: Bench, route: Route, why: str) -> None:
    """Put the edited file back as a run stops; when the board does not let us, say that the
    next start restores it (its state file stays)."""
    try:
        restore_outstanding(bench, route.state_file, bench.say, why)
    except (UBootError, ShellError, ConsoleTimeout, RuntimeError) as error:
        bench.say(f"the edited file is not restored yet ({error}); the next bootlab boot or ab "
                  "on this port restores it first (or --restore)")


@dataclass(frozen=True)
class ABRow:
    """One milestone of an A/B report."""

    milestone: str
    medians: tuple[float | None, ...]
    """Median elapsed seconds per variant (None: not reached)."""
    differences: tuple[str, ...]
    """Each later variant against the first, in words (empty: fewer than two boots a side)."""


@dataclass(frozen=True)
class ABReport:
    """The statistics of an A/B run's done boots, against its first variant."""

    name: str
    path: Path
    """The state file."""
    variants: tuple[str, ...]
    columns: tuple[compare.Column, ...]
    order: tuple[str, ...]
    boots: tuple[ABBoot, ...]
    """The boots with their A/B tags (to check predictions against)."""
    evidence: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per variant, how its settings were verified (`verify.summary_lines`)."""
    left_out: tuple[str, ...] = ()
    """Sessions left out of the statistics: their boot contradicted their variant."""
    judging: compare.Judging | None = None
    """How the differences are read: one verdict at the goal, the others adjusted."""
    looks: tuple[str, ...] = ()
    """An `--until-decided` run's looks in words, the interval narrowing, and how it ended."""
    caveats: tuple[str, ...] = ()
    """What limits the reading (`compare.found_differently` at the goal)."""

    def evidence_text(self) -> str:
        """Per variant, how each setting was verified, and the boots left out (under a
        heading after a blank line; empty when no boot was verified); then the caveats."""
        lines = [f"{variant}: {line}" for variant, found in self.evidence for line in found]
        lines += [f"left out (a setting against its variant): {name}" for name in self.left_out]
        text = "".join(f"{line}\n" for line in ["", "settings, as each boot showed them:",
                                                  *lines]) if lines else ""
        return text + "".join(f"\ncaveat: {caveat}\n" for caveat in self.caveats)

    def text(self) -> str:
        """The comparison table, the verdict and the other milestones' differences as
        sentences, and the looks of an `--until-decided` run (`bootlab ab` prints it)."""
        text = compare.to_text(self.columns, self.order, self.judging)
        return text + "".join(f"{line}\n" for line in ["", *self.looks] if self.looks)

    def verdicts(self) -> list[str]:
        """The run's verdict, one per variant after the first, in words."""
        return [] if self.judging is None else self.judging.verdicts(self.columns)

    def rows(self) -> list[ABRow]:
        """Per milestone: each variant's median, and the differences in words (at the goal
        the verdicts)."""
        rows = []
        for milestone in self.order:
            summaries = [column.summary(milestone) for column in self.columns]
            said = self.verdicts() if self.judging is not None and \
                milestone == self.judging.goal else \
                compare.sentences(self.columns, [milestone], self.judging)
            rows.append(ABRow(milestone, tuple(s.median if s else None for s in summaries),
                              tuple(said)))
        return rows

    def boards(self) -> list[str]:
        """The boards the run's boots ran on, when several (its statistics are then blocked by
        board); [] for one."""
        if not compare.blocked(self.columns):
            return []
        return sorted({board for column in self.columns for board in column.board_names()})

    def board_medians(self) -> list[tuple[str, tuple[float | None, ...]]]:
        """Per milestone, each variant's median on each board: board by board, the variants
        in order within each (as `boards()` and `variants`); [] for one board."""
        parts = compare.board_columns(self.columns)
        return [(milestone, tuple(s.median if (s := part.summary(milestone)) else None
                                  for part in parts)) for milestone in self.order] if parts else []


def report(state: ABState, profile: Profile, reference: str, settings: Sequence[Setting] = (),
           goal: Goal | None = None,
           effect_s: float = sequential.DEFAULT_EFFECT_S) -> ABReport:
    """Read the run's done sessions: per-milestone statistics, variants in the state's order
    (each session analysed with its own stored goal, so a pattern goal's `goal` shows), read
    with one verdict at the goal milestone (`ab_judging`)."""
    folder = state.path.parent
    order = list(state.variants)
    entries = []
    boots: list[ABBoot] = []
    verified: dict[str, list[list[Check]]] = {variant: [] for variant in order}
    left_out: list[str] = []
    for (variant, run), name in sorted(state.done.items(),
                                       key=lambda item: (order.index(item[0][0]), item[0][1])):
        source = open_source(folder / name)
        checks = recorded_checks(source.meta)
        if any(check.contradicted for check in checks):
            left_out.append(name)
            continue
        verified[variant].append(checks)
        analysis = analyze_source(source, profile)
        for boot in analysis.boots[:1]:
            entries.append(compare.Entry(name, variant, boot, reference,
                                         compare.probe_figures(source.meta),
                                         state.boards.get((variant, run), "")))
        boots += ab_boots(source.meta, analysis)[:1]
    columns = compare.build_columns(entries)
    evidence = tuple((variant, tuple(summary_lines(found))) for variant, found in verified.items()
                     if any(found))
    milestones = compare.milestone_order(columns, profile.order)
    judging = ab_judging(state, profile, settings, columns, milestones,
                         goal_milestone(goal or Goal()), effect_s)
    target = goal_milestone(goal or Goal())
    caveats = [compare.found_differently(entries, target),
               *(compare.sources_differ(entries, m) for m in milestones if m != target)]
    return ABReport(state.name, state.path, tuple(order), tuple(columns), tuple(milestones),
                    tuple(boots), evidence, tuple(left_out), judging, _looks_text(state),
                    tuple(c for c in caveats if c is not None))


def goal_milestone(goal: Goal) -> str:
    """The milestone an A/B run's verdict is about: the goal's (its first, when several)."""
    return goal.until[0]


def ab_judging(state: ABState, profile: Profile, settings: Sequence[Setting],
               columns: Sequence[compare.Column], order: Sequence[str], goal: str,
               effect_s: float) -> compare.Judging:
    """How the run's differences are read: the verdict's level (an `--until-decided` run's
    last look's; else 95% split over the variants after the first), effect, and for each
    variant the milestones of stages before its settings (or the first variant's) can act."""
    first = parse_spec(next(iter(state.variants.values())))
    early = {}
    for name, spec in state.variants.items():
        stage = STAGES.index(acts_from([*first, *parse_spec(spec)], settings))
        early[name] = frozenset(m.id for m in profile.markers
                                if STAGES.index(m.stage) < stage)
    level = 1.0 - sequential.ALPHA / max(1, len(state.variants) - 1)
    if state.until is not None:
        effect_s = state.until.effect_s
        if state.until.judged:
            level = state.design.level(state.design.looks.index(state.until.judged[-1].boots))
    return compare.make_judging(columns, order, goal, effect_s, level, early)


def _looks_text(state: ABState) -> tuple[str, ...]:
    """An `--until-decided` run's looks, and how it ended with how many boots."""
    if state.until is None or not state.until.judged:
        return ()
    last = state.until.judged[-1]
    ended = "decided" if last.decided else \
        ("undecided: the budget is spent" if last.boots >= state.boots else "not finished")
    return (f"until decided ({sequential.METHOD}; effect that matters "
            f"±{state.until.effect_s * 1000:g} ms):",
            *(line for judged in state.until.judged for line in judged.lines),
            f"{ended} after {last.boots} boots per variant "
            f"({last.boots * len(state.variants)} in all; budget {state.boots} each)")


def judge_look(state: ABState, profile: Profile, reference: str,
               goal: Goal) -> LookJudged | None:
    """Judge the look now due (`ABState.due_look`) at the goal milestone, each variant after
    the first against it, and keep it in the state; None when no look is due."""
    index = state.due_look()
    if index is None or state.until is None:
        return None
    effect_s = state.until.effect_s
    columns = {column.name: column for column in report(state, profile, reference).columns}
    names = list(state.variants)
    milestone = goal_milestone(goal)

    def values(name: str) -> tuple[list[float], list[str]]:
        column = columns.get(name)
        return ([], []) if column is None else \
            (column.values.get(milestone, []), column.boards_of(milestone))

    base, base_boards = values(names[0])
    looks = [sequential.look(state.design, index, base, values(name)[0], effect_s, base_boards,
                             values(name)[1]) for name in names[1:]]
    decided = all(look.decided for look in looks)
    lines = tuple(f"{name}: {look.text(effect_s)}" for name, look in zip(names[1:], looks,
                                                                         strict=True))
    boots = state.design.looks[index]
    state.record_look(boots, decided, lines)
    return LookJudged(index + 1, boots, lines, decided, decided or boots >= state.boots)


def choices_spec(settings: Sequence[Setting], chosen: Mapping[str, State]) -> tuple[str, str,
                                                                                     list[str]]:
    """The app's pending choices as an A/B variant: (name, spec, what it leaves out).

    Switching a setting on is its id (`quiet`, `bootdelay=1`); switching a kernel parameter
    off removes it (`cmdline-=quiet`); a U-Boot variable switched off is deleted or set to
    its `off` value. A setting whose `off` is "restore" has nothing to send when switched
    off: it is left out, and said so.
    """
    by_id = {s.id: s for s in settings}
    items: list[SpecItem] = []
    names: list[str] = []
    left_out: list[str] = []
    for ident, state in chosen.items():
        setting = by_id[ident]
        if state is True or isinstance(state, str):
            items.append(SpecItem("setting", ident, state if isinstance(state, str) else None))
            names.append(ident)
        elif setting.kind in ("cmdline_flag", "cmdline_value") and setting.name:
            items.append(SpecItem("cmdline_remove", "", setting.name))
            names.append(f"no-{ident}")
        elif setting.kind == "uboot_var" and setting.var and setting.off != "restore":
            items.append(SpecItem("uboot", setting.var,
                                  "" if setting.off == "delete" else setting.off))
            names.append(f"no-{ident}")
        else:
            left_out.append(f"{setting.title}: switching it off leaves the board as it is")
    name = "+".join(names)
    return (name if 0 < len(name) <= 40 else "pending"), format_spec(items), left_out


def run_name(folder: Path, stem: str, variants: Sequence[tuple[str, str]], boots: int,
             until_effect_s: float | None = None) -> str:
    """The A/B run `STEM-N` to use: the first unfinished one with these variants, boots and
    way of stopping (it is resumed), else the first unused number."""
    wanted = {name: format_spec(parse_spec(spec)) for name, spec in variants}

    def resumable(path: Path) -> bool:
        try:
            state = ABState.load(path)
        except ABStateError:
            return False  # an unreadable state is left alone: the next number is used
        return state.variants == wanted and state.boots == boots \
            and (state.until and state.until.effect_s) == until_effect_s and not state.finished

    return numbered_name(stem[:36], partial(state_path, folder), resumable)
