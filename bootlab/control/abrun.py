"""A/B runs on an open bench: the loop `bootlab ab` and the app share, and its report.

`run_ab` boots the runs of an `ABState` (bootlab/core/abplan.py) in their planned order. Before
each boot the U-Boot variables any variant touches are brought to that variant's values
(`setenv`, then `saveenv` when persisting); a boot that reaches its goal is closed "done" and
marked in the state file, one that does not is booted again later. With `persist` the board's
environment is put back at the end. Progress goes to a callback as events, so the command line
prints lines and the app moves its progress bar; `report` turns the done sessions into
per-milestone statistics against the first variant.

The app also needs `choices_spec` (its pending settings as a variant spec) and `run_name` (which
state file a run from the app uses: an unfinished one with the same variants is resumed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bootlab.control.engine import Bench, BootResult, Probe
from bootlab.core import compare
from bootlab.core.abplan import (
    ABState,
    ABStateError,
    SpecItem,
    format_spec,
    parse_spec,
    state_path,
)
from bootlab.core.advice import ABBoot, ab_boots
from bootlab.core.analysis import analyze
from bootlab.core.hush import setenv_command
from bootlab.core.profiles import Profile
from bootlab.core.settings import BoardFacts, Kind, Plan, Setting, State, plan
from bootlab.core.sources import open_source


def _synthetic(items: Sequence[SpecItem]) -> tuple[list[Setting], dict[str, State], list[str]]:
    """Settings for the raw spec items: kernel tokens added or removed, U-Boot variables."""
    extra: list[Setting] = []
    chosen: dict[str, State] = {}
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


def make_plan(settings: Sequence[Setting], spec: Sequence[SpecItem], env: dict[str, str],
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


def sync_commands(current: Mapping[str, str], target: Mapping[str, str],
                  touched: Sequence[str]) -> list[str]:
    """Commands taking the variables the variants touch from `current` to `target`."""
    return [setenv_command(var, target.get(var)) for var in touched
            if current.get(var) != target.get(var)]


@dataclass(frozen=True)
class ABOptions:
    """How each boot of an A/B run is made and measured."""

    persist: bool
    """saveenv and reset (the autoboot is measured), instead of setenv and `boot`."""
    until: str = "login"
    timeout_s: float = 120.0
    login: bool = False
    """Log in after the goal (for `commands` and `probes`)."""
    probes: tuple[Probe, ...] = ()
    commands: tuple[str, ...] = ()
    from_linux: bool = False
    force: tuple[str, ...] = ()


@dataclass(frozen=True)
class VariantPlanned:
    """What a variant sends at the first boot (from the environment read at the start)."""

    variant: str
    commands: tuple[str, ...]
    warnings: tuple[str, ...]


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


@dataclass(frozen=True)
class BootFinished:
    """A run has booted (or missed its goal and will be booted again)."""

    variant: str
    run: int
    reached: bool
    goal: str
    goal_s: float | None
    """Seconds from the boot or reset command to the goal milestone."""
    session: Path


ABEvent = VariantPlanned | BootStarting | BootFinished


def goal_seconds(result: BootResult, goal: str) -> float | None:
    """When a measured boot reached its goal, in seconds from its start."""
    return next((m.host_s for m in result.milestones if m.id == goal), None)


def run_ab(bench: Bench, state: ABState, settings: Sequence[Setting],
           facts_of: Callable[[dict[str, str]], BoardFacts], options: ABOptions,
           progress: Callable[[ABEvent], None]) -> None:
    """Boot every run of `state` not done yet, marking each done as it reaches its goal.

    Args:
        bench: the bench, any state (it is brought to the bootloader).
        state: the run's plan and progress (saved after every boot).
        settings: the settings model.
        facts_of: the board's facts for an environment (what the log showed, plus it).
        options: how boots are made and measured.
        progress: told of each step.

    Raises:
        UBootError, ShellError, ConsoleTimeout, RuntimeError: the board did not cooperate;
            the state keeps what was done, so the run can be resumed.
    """
    baseline = bench.printenv()
    facts = facts_of(baseline)
    plans = {name: make_plan(settings, parse_spec(spec), baseline, facts, options.force)
             for name, spec in state.variants.items()}
    touched = sorted({var for _, _, target in plans.values() for var in set(target) | set(baseline)
                      if target.get(var) != baseline.get(var)})
    for name, (the_plan, commands, _) in plans.items():
        progress(VariantPlanned(name, tuple(commands), tuple(the_plan.warnings)))
    recorder = bench.console.recorder
    while (step := state.next_run()) is not None:
        variant, run = step
        progress(BootStarting(len(state.done) + 1, state.total, variant, run, state.boots,
                              state.progress(step)))
        the_plan, _, target = plans[variant]
        sync = sync_commands(bench.printenv(), target, touched)
        if options.persist:
            sync.append("saveenv")
        bench.apply(sync, persist=False, baud=the_plan.baud)
        result = bench.boot({**state.session_meta(variant, run), "settings": the_plan.record},
                            options.persist, options.until, options.timeout_s,
                            login=options.login, probes=options.probes,
                            commands=options.commands, from_linux=options.from_linux)
        if result.reached:
            writer = recorder.writer
            writer.event("end", time.monotonic_ns() - writer.start_ns, reason="done")
            state.mark_done(variant, run, Path(result.path).name)
        if options.persist or state.next_run() is not None:
            # The setup dialogue that follows is no A/B boot: its session has no A/B tag.
            bench.setup_session(label="setup", ab=None)
        progress(BootFinished(variant, run, result.reached, options.until,
                              goal_seconds(result, options.until), Path(result.path)))
    if options.persist:
        restore = sync_commands(bench.printenv(), baseline, touched)
        bench.apply([*restore, "saveenv"] if restore else [], persist=False)
    recorder.writer.flush(sync=True)  # the last boot's session may still be the open one


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

    def text(self) -> str:
        """The comparison table with the differences as sentences (`bootlab ab` prints it)."""
        return compare.to_text(self.columns, self.order)

    def rows(self) -> list[ABRow]:
        """Per milestone: each variant's median, and the differences in words."""
        rows = []
        for milestone in self.order:
            summaries = [column.summary(milestone) for column in self.columns]
            rows.append(ABRow(milestone, tuple(s.median if s else None for s in summaries),
                              tuple(compare.sentences(self.columns, [milestone]))))
        return rows


def report(state: ABState, profile: Profile, reference: str) -> ABReport:
    """Read the run's done sessions: per-milestone statistics, variants in the state's order."""
    folder = state.path.parent
    order = list(state.variants)
    entries = []
    boots: list[ABBoot] = []
    for (variant, _), name in sorted(state.done.items(),
                                     key=lambda item: (order.index(item[0][0]), item[0][1])):
        source = open_source(folder / name)
        analysis = analyze(source.data, profile, source.line_time)
        for boot in analysis.boots[:1]:
            entries.append(compare.Entry(name, variant, boot, reference,
                                         compare.probe_figures(source.meta)))
        boots += ab_boots(source.meta, analysis)[:1]
    columns = compare.build_columns(entries)
    return ABReport(state.name, state.path, tuple(order), tuple(columns),
                    tuple(compare.milestone_order(columns, profile.order)), tuple(boots))


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


def run_name(folder: Path, stem: str, variants: Sequence[tuple[str, str]], boots: int) -> str:
    """The A/B run `STEM-N` to use: the first unfinished one with these variants and boots
    (it is resumed), else the first unused number."""
    wanted = {name: format_spec(parse_spec(spec)) for name, spec in variants}
    number = 1
    while True:
        name = f"{stem[:36]}-{number}"
        path = state_path(folder, name)
        if not path.exists():
            return name
        try:
            state = ABState.load(path)
        except ABStateError:
            state = None
        if state is not None and state.variants == wanted and state.boots == boots \
                and state.next_run() is not None:
            return name
        number += 1


def ab_sessions(paths: Sequence[Path]) -> list[Path]:
    """Session files of A/B runs: a state file (`ab-NAME.json`) stands for its done sessions,
    a folder for every state file in it, and a session file for itself.

    Raises:
        ABStateError: a state file cannot be read.
    """
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += ab_sessions(sorted(path.glob("ab-*.json")))
        elif path.suffix == ".json":
            state = ABState.load(path)
            out += [path.parent / name for name in state.done.values()]
        else:
            out.append(path)
    return out
