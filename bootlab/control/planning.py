"""Planning a run's variants on the bench, so that each is measured only with its settings.

`plan_run` is what `bootlab boot`, `bootlab ab`, each `tune` step and the app's P and T do
before their first measured boot:

1. **Learn what is not known.** When a variant changes the kernel's command line and no boot
   recorded on the port showed it, or a setting is left out for want of a fact and no boot was
   recorded on the port at all, the board is booted once as it is: a setup boot, recorded
   (role "boot", label `setup-boot`) but never measured or counted. Its log gives the facts
   (`facts_from_log`), and `/proc/cmdline` after login the kernel's command line when the log
   does not show it.
2. **Find where the kernel's arguments come from** (`uboot.find_source`), checked against the
   line the kernel got: the environment, the file distro boot reads, or a file found on the
   board's partitions by its contents.
3. **Plan every variant** (`plan.plan`). Where a file the environment cannot change carries
   the arguments, a file route edits it: at the U-Boot prompt where U-Boot can write that file
   system (`ext4write`, `fatwrite`), or from Linux with `--from-linux`.
4. **Refuse what cannot be put in force.** Every setting a variant names and its plan leaves
   out (not applicable, needs a value, refused, a file bootlab cannot edit, a setting acting
   before the prompt without `--persist`, an environment that cannot be saved) stops the run
   before its first measured boot with `SettingRefused`: the reason and what would make it work.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from bootlab.control import promptedit
from bootlab.control.engine import Bench
from bootlab.control.uboot import UBootError, cmdline_from_proc, find_source, start_device
from bootlab.core.analysis.bootlog import read_boot
from bootlab.core.analysis.goals import Goal
from bootlab.core.analysis.units import status_hidden
from bootlab.core.board.abplan import SpecItem
from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.facts import BoardFacts, facts_from_log
from bootlab.core.board.hush import setenv_command
from bootlab.core.board.plan import Plan, plan
from bootlab.core.board.settings import Kind, Setting, State
from bootlab.core.board.verify import PROC_CMDLINE
from bootlab.core.capture.session import load_session

VariantPlan = tuple[Plan, list[str], dict[str, str]]
"""A variant's plan, the U-Boot commands it sends, and the environment it leads to."""
LEARN_LABEL = "setup-boot"
"""The label of the boot that learns a board before a run (not measured, not counted)."""
_NOWHERE = "Loading Environment from nowhere"
"""What U-Boot prints at start when its environment has no storage (ENV_IS_NOWHERE)."""


class SettingRefused(Exception):
    """A variant's setting cannot be put in force on this board; said before any measured
    boot, with the reason and what would make it work. `run`: the plan as far as it got
    (where the kernel's arguments come from, which route could edit them), when it got that
    far."""

    def __init__(self, message: str, run: RunPlan | None = None) -> None:
        super().__init__(message)
        self.run = run


@dataclass(frozen=True)
class PlanOptions:
    """How the run will boot, as far as planning it needs to know."""

    force: tuple[str, ...] = ()
    """Settings whose "not applicable" and refused values are overridden."""
    from_linux: bool = False
    """Edit a boot file from the Linux shell (the measured boot is a reboot from Linux)."""
    persist: bool = False
    """saveenv, then reset: the autoboot is measured."""
    goal: Goal = field(default_factory=Goal)
    timeout_s: float = 120.0
    learn: bool = True
    """Boot the board once to learn it when its facts are missing (else plan with what is
    known: a dry run's preview)."""


@dataclass
class RunPlan:
    """The run's variants, planned, and how their settings reach the board."""

    plans: dict[str, VariantPlan]
    facts: BoardFacts
    env: dict[str, str]
    source: ArgSource | None = None
    """Where the kernel's arguments come from (None: no variant changes them)."""
    route: Literal["prompt", "linux"] | None = None
    """How a boot file is edited for each boot (None: no file is)."""
    write: str | None = None
    """The prompt route's write command (`ext4write`, `fatwrite`)."""
    persist: bool = False
    """Measured from a reset with saved settings (`--persist`, unless the environment cannot be
    saved and nothing needs it)."""
    started: bool = False
    """A device was started at the prompt to read a file: reset before the first measured boot
    (unless the prompt route reads it before every boot anyway)."""
    learned: str | None = None
    """The setup boot's session file, when one was made."""
    no_route: str = ""
    """Why no file route can edit the boot file, when none can."""

    def arguments(self) -> dict[str, object] | None:
        """Where the kernel's arguments come from and how bootlab puts a parameter there, for
        a boot's session header (what `advise` and the app read to suggest a command that
        will work on this board); None when no variant changes them."""
        source = self.source
        if source is None:
            return None
        return {"kind": source.kind, "where": source.where, "route": self.route_name(),
                **({"why": self.no_route} if self.no_route else {})}

    def route_name(self) -> str | None:
        """How a kernel parameter reaches the board: "environment", "prompt", "linux",
        "linux only" (the prompt cannot write the file; --from-linux can), or None (bootlab
        cannot put one there)."""
        source = self.source
        if self.route is not None or source is None:
            return self.route
        if source.env_can_change:
            return "environment"
        return "linux only" if source.file_editable and self.no_route else None


def synthetic(items: Sequence[SpecItem]) -> tuple[list[Setting], dict[str, State], list[str]]:
    """Settings for the raw spec items (kernel tokens added or removed: `spec_N`), the choices
    of all items, and the commands of raw U-Boot variables."""
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


def variant_plan(settings: Sequence[Setting], spec: Sequence[SpecItem], env: Mapping[str, str],
                 facts: BoardFacts, force: Sequence[str], source: ArgSource | None = None
                 ) -> VariantPlan:
    """A variant's plan, the U-Boot commands it takes, and the environment it leads to
    (`source`: where the board's kernel arguments come from, `plan.plan`)."""
    extra, chosen, raw = synthetic(spec)
    result = plan([*settings, *extra], chosen, env, facts, force=force, persist=False,
                  source=source)
    target = dict(result.env_after)
    for item in spec:
        if item.kind == "uboot":
            if item.value:
                target[item.name] = item.value
            else:
                target.pop(item.name, None)
    return result, [*result.commands, *raw], target


def file_plan(planned: VariantPlan, spec: Sequence[SpecItem], source: ArgSource) -> VariantPlan:
    """A variant's plan when a file route carries its kernel parameters: the refused
    settings are applied after all, through the file's command line."""
    the_plan, commands, target = planned
    edited = source.edited(the_plan.file_edits)
    if edited is None:
        raise SettingRefused(f"bootlab cannot edit {source.where} for this variant")
    _, chosen, _ = synthetic(spec)
    skipped = {k: why for k, why in the_plan.skipped.items() if k not in the_plan.refused}
    record = {**the_plan.record, "cmdline": edited[1],
              "chosen": {k: choice for k, choice in chosen.items() if k not in skipped}}
    warnings = [w for w in the_plan.warnings if w not in the_plan.refused.values()]
    return replace(the_plan, warnings=warnings, record=record, cmdline=edited[1],
                   skipped=skipped, refused={}), commands, target


def _settings_of(spec: Sequence[SpecItem], settings: Sequence[Setting]) -> list[Setting]:
    """The settings a variant names (raw kernel tokens as `synthetic` settings)."""
    extra, chosen, _ = synthetic(spec)
    by_id = {s.id: s for s in [*settings, *extra]}
    return [by_id[ident] for ident in chosen if ident in by_id]


def _changes_cmdline(setting: Setting) -> bool:
    return setting.kind.startswith("cmdline")


def learn(bench: Bench, facts: BoardFacts, options: PlanOptions, needs_cmdline: bool,
          say: Callable[[str], object]) -> tuple[BoardFacts, str]:
    """Boot the board as it is once (a setup boot: recorded, not measured) and learn its facts
    from that boot, the kernel's command line from `/proc/cmdline` when the log does not
    show it and a variant needs it. Returns the facts (environment as before) and the
    session file.

    Raises:
        SettingRefused: the setup boot did not reach the run's goal.
    """
    why = "no earlier boot on this port" if not facts.lines else \
        "the last boot on this port did not show the kernel's command line"
    say(f"{why}: booting the board as it is once to learn it (a setup boot, recorded, not "
        "measured)")
    bench.to_bootloader()
    result = bench.boot({"label": LEARN_LABEL, "purpose": "learn"}, False, options.goal,
                        options.timeout_s)
    writer = bench.console.recorder.writer
    writer.flush(sync=True)
    name = Path(result.path).name
    if not result.reached:
        raise SettingRefused(f"the setup boot ({name}) did not reach {options.goal.name} within "
                             f"{options.timeout_s:g} s, so the board's facts stay unknown")
    log = read_boot(load_session(Path(result.path)).data, bench.console.recorder.profile)
    learned = facts_from_log(log, facts.env, facts.hush)
    how = "its log"
    if needs_cmdline and learned.kernel_cmdline is None:
        if bench.state == "running":
            bench.settle()
        line = cmdline_from_proc(bench.run_after(result, PROC_CMDLINE))
        if line:
            learned = replace(learned, kernel_cmdline=line)
            how = "/proc/cmdline"
    writer.event("end", time.monotonic_ns() - writer.start_ns, reason="done")
    shown = f"the kernel's command line (from {how}): {learned.kernel_cmdline}" \
        if learned.kernel_cmdline is not None else "no kernel command line (not in its log, " \
        "and no login to read /proc/cmdline)"
    say(f"setup boot {name}: {shown}")
    bench.setup_session(label="setup")
    return learned, name


def env_saveable(bench: Bench, facts: BoardFacts) -> str | None:
    """Why the board's U-Boot environment cannot be saved (None: it can, as far as bootlab can
    tell): no `saveenv` command, or an environment loaded from nowhere."""
    if "Unknown command 'saveenv'" in bench.uboot.run("help saveenv"):
        return "this U-Boot has no saveenv command"
    if any(_NOWHERE in line for line in facts.lines):
        return "U-Boot loads its environment from nowhere (ENV_IS_NOWHERE)"
    return None


def plan_run(bench: Bench, specs: Mapping[str, Sequence[SpecItem]],
             settings: Sequence[Setting], env: dict[str, str], facts: BoardFacts,
             options: PlanOptions, say: Callable[[str], object]) -> RunPlan:
    """Learn, locate, plan and check the run's variants (see the module docstring).

    Raises:
        SettingRefused: a setting a variant names cannot be put in force (nothing measured).
    """
    hidden = [f"variant {name}: {why}" for name, spec in specs.items()
              if (why := status_hidden(options.goal, _added_words(spec)))]
    if hidden:  # known from the specs alone: before any boot
        raise SettingRefused("; ".join(hidden))
    named = {name: _settings_of(spec, settings) for name, spec in specs.items()}
    cmdline = any(_changes_cmdline(s) for found in named.values() for s in found)
    run = RunPlan({name: variant_plan(settings, spec, env, facts, options.force)
                   for name, spec in specs.items()}, facts, env, persist=options.persist)
    left_out = any(why.startswith("not applicable") for planned in run.plans.values()
                   for why in planned[0].skipped.values())  # perhaps for want of a fact
    if options.learn and ((cmdline and facts.kernel_cmdline is None)
                          or (left_out and not facts.lines)):
        facts, run.learned = learn(bench, facts, options, cmdline, say)
        env = bench.printenv()
        run.facts, run.env = facts.with_env(env), env
        facts = run.facts
        run.plans = {name: variant_plan(settings, spec, env, facts, options.force)
                     for name, spec in specs.items()}
    if cmdline:
        bench.to_bootloader()
        try:
            run.source, run.started = find_source(bench.uboot, env, facts.lines,
                                                  facts.kernel_cmdline)
        except UBootError as error:
            raise SettingRefused(f"where the kernel's arguments come from could not be read at "
                                 f"the U-Boot prompt: {error}") from None
        run.plans = {name: variant_plan(settings, spec, env, facts, options.force, run.source)
                     for name, spec in specs.items()}
        _choose_route(bench, run, specs, options)
        writer = bench.console.recorder.writer   # kept with the port's sessions (`advise`)
        writer.meta(time.monotonic_ns() - writer.start_ns, arguments=run.arguments())
    refusals = _refusals(bench, run, specs, named, options)
    if refusals:
        raise SettingRefused("; ".join(dict.fromkeys(refusals)), run)
    return run


def _choose_route(bench: Bench, run: RunPlan, specs: Mapping[str, Sequence[SpecItem]],
                  options: PlanOptions) -> None:
    """A file route for the kernel parameters the environment cannot carry, when the file can
    be edited: from Linux with --from-linux, else at the prompt when U-Boot can write it."""
    source = run.source
    if source is None or source.file is None or source.file.device is None \
            or not any(p.refused for p, _, _ in run.plans.values()) or not source.file_editable:
        return
    if options.from_linux:
        run.route = "linux"
    else:
        try:
            start_device(bench.uboot, source.file.device, run.env)
        except UBootError as error:
            run.no_route = str(error)
            return
        run.write, run.no_route = promptedit.writer_of(bench, source.file.device)
        run.route = "prompt" if run.write is not None else None
    if run.route is not None:
        run.plans = {name: file_plan(run.plans[name], specs[name], source)
                     if run.plans[name][0].refused else run.plans[name] for name in run.plans}


def _added_words(spec: Sequence[SpecItem]) -> list[str]:
    """What a variant adds to the kernel's command line, as words: its settings' ids, the
    tokens it adds, and the words of `cmdline_extra`."""
    words: list[str] = []
    for item in spec:
        if item.kind == "cmdline_add":
            words += (item.value or "").split()
        elif item.kind not in ("uboot", "cmdline_remove"):
            words.append(item.name)
            if item.name == "cmdline_extra":
                words += (item.value or "").split()
    return words


def _refusals(bench: Bench, run: RunPlan, specs: Mapping[str, Sequence[SpecItem]],
              named: Mapping[str, Sequence[Setting]], options: PlanOptions) -> list[str]:
    """Why each named setting that the plans leave out cannot be put in force, and what would
    make it work; the run's persist decided on the way."""
    out: list[str] = []
    for name, found in named.items():
        the_plan = run.plans[name][0]
        for setting in found:
            why = the_plan.skipped.get(setting.id)
            if why is not None:
                refused = setting.id in the_plan.refused
                out.append(f"variant {name}: {_remedied(setting, why, refused, run, options)}")
            elif setting.before_prompt and not options.persist:
                out.append(f"variant {name}: {setting.title} acts before the U-Boot prompt, "
                           "so a boot started at the prompt never shows it: use --persist "
                           "(saveenv, then reset: the autoboot is measured)")
    sends = [name for name, (_, commands, _) in run.plans.items() if commands]
    if options.persist and sends and not out:
        cannot = env_saveable(bench, run.facts)
        if cannot is not None:
            early = [f"variant {name}: {s.title} cannot be measured with --persist: {cannot}, "
                     f"and {s.title} acts before the U-Boot prompt, where only a saved "
                     "environment reaches" for name in sends for s in named[name]
                     if s.before_prompt]
            if early or options.from_linux:
                out += early or [f"variant {name}: its U-Boot commands cannot be kept across "
                                 f"the reboot from Linux that --from-linux measures: {cannot}; "
                                 "run without --from-linux --persist (each boot then set up at "
                                 "the prompt)" for name in sends]
            else:
                run.persist = False
                bench.say(f"the environment cannot be saved ({cannot}): each boot is set up at "
                          "the prompt and started with the boot command, not measured from a "
                          "reset")
    return out


def _remedied(setting: Setting, why: str, refused: bool, run: RunPlan,
              options: PlanOptions) -> str:
    """A setting's reason for being left out (`refused`: the environment cannot carry it),
    with what would make it work."""
    label = setting.title if setting.id.startswith("spec_") else f"{setting.title} ({setting.id})"
    if refused:
        source = run.source
        assert source is not None
        head = f"{label} cannot be applied: this board's kernel arguments come from " \
            f"{source.where}, which the U-Boot environment cannot change"
        if not source.file_editable:
            return f"{head}; bootlab cannot edit it ({_not_editable(source)})"
        if options.from_linux:
            return f"{head}; it could not be edited from Linux"
        return (f"{head}; it cannot be edited at the U-Boot prompt ({run.no_route}): use "
                "--from-linux --persist to edit it from Linux")
    if why.startswith("not applicable") or why.startswith("refused"):
        return f"{label}: {why} (--force {setting.id} applies it anyway)"
    if why == "needs a value":
        return f"{label}: needs a value: give {setting.id}=VALUE"
    return f"{label}: {why}"


def file_lines(the_plan: Plan, source: ArgSource | None, route: str | None) -> list[str]:
    """What a plan's file route does, in the words a preview shows beside the commands."""
    if route is None or source is None or source.file is None or not the_plan.file_edits:
        return []
    how = "at the U-Boot prompt" if route == "prompt" else "from Linux"
    return [f"edit {source.file.where} {how}: kernel command line `{the_plan.cmdline}`"]


def _not_editable(source: ArgSource) -> str:
    """Why bootlab cannot edit the file a source names, in words."""
    if source.file is None:
        return "no boot file on the board's partitions gives the kernel its arguments"
    if source.file.device is None:
        return f"the partition holding {source.file.path} is not known"
    if source.file.text is None:
        return f"{source.file.where} could not be read at the U-Boot prompt"
    return f"the kernel's arguments were not found as one line in {source.file.where}"
