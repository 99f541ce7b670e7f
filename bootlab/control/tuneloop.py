"""`bootlab tune`: the boot-cutting loop, unattended, each step proven by an A/B run.

`run_tune` measures the board as it is (a fixed A/B run of one variant), then repeats: read the
newest boots of the best configuration so far (the settings kept), rank what bootlab can apply
itself by predicted saving (`advice.rules.advise`; build changes go to the state's rebuild list,
never applied), and A/B-test the top candidate against the kept settings with the stop-when-
decided logic of `abrun`. A candidate is kept only when its saving's interval lies above zero
and the saving is at least the one that matters (`--effect`; `decide`), the boots showed it in
force (`abverify`), and its boots lost no milestone the kept configuration reaches (the goal
included: a boot that misses the goal is harmful, and the board is reset and the setting undone
at once). The loop stops at the budget, when nothing predicted is left, or at the time limit.
Every change of the state is saved (`board.tuneplan`), so an interrupted tune resumes, and
`restore` puts back the environment saved before the first change.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bootlab.control import abrun, abvariants
from bootlab.control.abverify import NotInForce
from bootlab.control.engine import Bench
from bootlab.control.planning import PlanOptions, SettingRefused, file_lines, plan_run
from bootlab.core.advice.recommendation import Recommendation, rank
from bootlab.core.advice.rules import advise
from bootlab.core.analysis import compare, sequential
from bootlab.core.analysis.goals import Goal
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.profiles import Profile
from bootlab.core.board.abplan import ABState, SpecError, load_or_create, parse_spec, parse_variant
from bootlab.core.board.evidence_rules import Condition
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.settings import Setting
from bootlab.core.board.tuneplan import (
    Outcome,
    TuneBaseline,
    TuneEvent,
    TuneFinished,
    TuneRanked,
    TuneState,
    TuneStep,
    TuneStepDone,
    TuneStepStarted,
)
from bootlab.core.capture.sources import open_source

KEPT = "kept"
"""The A/B variant name of the best configuration so far."""
BASELINE = "board"
"""The baseline run's one variant: the board as it is."""
BASELINE_FIRST = 3
"""Baseline boots made at once, before their spread is looked at."""
BASELINE_SPREAD = 0.05
"""The goal's relative spread (sd / median) of the baseline above which it gets more boots."""

Progress = Callable[[TuneEvent | abrun.ABEvent], None]


@dataclass(frozen=True)
class TuneOptions:
    """How a tune boots, measures and decides."""

    ab: abrun.ABOptions
    """How each boot is made (persist, goal, timeout ...)."""
    profile: Profile
    reference: str
    """Where times count from (the profile's reference)."""
    baseline_boots: int = 6
    """Boots of the board as it is at most (`baseline_settled`)."""
    max_boots: int = 8
    """Boots per variant at most in each step's A/B run (its looks: `sequential.spending`)."""
    effect_s: float = sequential.DEFAULT_EFFECT_S
    """The smallest saving that matters."""
    keep_going: bool = False
    """Go on cutting past the budget (until nothing is left or the time limit)."""
    tries: tuple[str, ...] = ()
    """Spec items to test first, before the recommendations (the user's own candidates)."""
    max_steps: int | None = None
    """Stop once this many steps were decided (None: no limit)."""


class _Missed(Exception):
    """A candidate's boot did not reach its goal."""


def decide(diff_ms: tuple[float, float, float] | None, verdict: str, boots: int,
           lost: Sequence[str], effect_s: float) -> tuple[Outcome, str]:
    """A step's outcome and why, from its A/B run at the goal.

    Args:
        diff_ms: (saving, low, high) of the measured saving in ms (positive: faster), or None
            with fewer than two boots a side.
        verdict: the goal's verdict (`sequential.judge`).
        boots: boots per variant.
        lost: milestones the kept configuration reached in every boot and the candidate in
            none (or a failure milestone the candidate reached).
        effect_s: the smallest difference that matters.
    """
    if lost:
        return "harmful", f"its boots lost {', '.join(lost)}"
    if diff_ms is None:
        return "rejected", f"no interval after {boots} boots a side"
    saving, low, high = diff_ms
    measured = f"{saving:.0f} ms [{low:.0f}, {high:.0f}] after {boots} boots a side"
    if verdict == "faster" and low > 0.0:
        if saving >= effect_s * 1000.0:
            return "kept", f"saves {measured}"
        return "rejected", (f"a real saving smaller than the {effect_s * 1000:g} ms that matters "
                            f"(--effect): {measured}")
    if verdict == "within":
        return "rejected", f"no saving that matters (within ±{effect_s * 1000:g} ms): {measured}"
    if verdict == "slower":
        return "rejected", f"slower: {measured}"
    return "rejected", f"undecided within the budget of boots: {measured}"


def _ab_name(state: TuneState, number: int) -> str:
    return f"{state.name}-{number}"


def _variant_name(setting: str) -> str:
    """An A/B variant name for a spec item: `bootdelay=0` -> `bootdelay0`."""
    name = re.sub(r"[^A-Za-z0-9_.+-]", "", setting)[:40]
    return name if name and name != KEPT else "candidate"


def _goal_values(column: compare.Column | None, options: TuneOptions) -> list[float]:
    return [] if column is None else column.values.get(abrun.goal_milestone(options.ab.goal), [])


def _sessions(ab: ABState, variant: str) -> list[str]:
    return [name for (v, _), name in sorted(ab.done.items()) if v == variant]


_PRINTK = re.compile(r"(?m)^\[\s*\d+\.\d+\]")
"""A kernel message's printk time at the start of a line."""


def _reached(folder: Path, sessions: Sequence[str], profile: Profile
             ) -> tuple[list[dict[str, str]], int]:
    """Per session, milestone id -> the line that showed it; and the kernel messages (lines
    with a printk time) of all of them."""
    found: list[dict[str, str]] = []
    kernel_lines = 0
    for name in sessions:
        source = open_source(folder / name)
        kernel_lines += len(_PRINTK.findall(source.data.decode("utf-8", "replace")))
        for boot in analyze_source(source, profile).boots[:1]:
            found.append({m.id: m.text for m in boot.milestones})
    return found, kernel_lines


def _removed_by(item: str, settings: Sequence[Setting]) -> list[Condition]:
    """The lines whose presence the spec item's own evidence rules read as "off" (`verify`:
    `Verifying Hash Integrity ...`): switching the setting on removes them by design."""
    ids = {spec.name for spec in parse_spec(item) if spec.kind == "setting"}
    return [rule.seen for setting in settings if setting.id in ids
            for rule in setting.evidence if rule.state is False and rule.seen is not None]


def _expected_gone(milestone: str, text: str, removed: Sequence[Condition]) -> bool:
    """Whether a milestone shown by the line `text` is one of the `removed` lines."""
    return any(c.arg == milestone if c.kind == "milestone" else
               c.kind == "log" and c.pattern is not None and bool(c.pattern.search(text))
               for c in removed)


def lost_milestones(folder: Path, kept: Sequence[str], other: Sequence[str],
                    profile: Profile, removed: Sequence[Condition] = ()) -> list[str]:
    """Milestones every `kept` boot reached and no `other` boot did, and failure milestones (a
    panic) an `other` boot reached and no `kept` one. A milestone only kernel messages showed
    is not lost when the `other` boots print under half the kernel messages (a quieter log
    level hides it: `quiet`, `loglevel`); one that user space or the bootloader prints is,
    unless its line is one the tried setting removes by design (`removed`: `_removed_by`)."""
    base, base_lines = _reached(folder, kept, profile)
    cand, cand_lines = _reached(folder, other, profile)
    if not base or not cand:
        return []
    quieter = cand_lines * len(base) < base_lines * len(cand) / 2
    fails = {m.id for m in profile.markers if m.fail}
    lost = [m for m in base[0] if m not in fails and all(m in b for b in base)
            and not any(m in c for c in cand)
            and not (quieter and all(_PRINTK.match(b[m]) for b in base))
            and not all(_expected_gone(m, b[m], removed) for b in base)]
    return lost + [f"{m} (reached)" for m in sorted(fails) if any(m in c for c in cand)
                   and not any(m in b for b in base)]


def candidates(state: TuneState, sessions: Sequence[Path], settings: Sequence[Setting],
               profile: Profile, tries: Sequence[str] = ()
               ) -> tuple[list[tuple[str, Recommendation | None]], list[tuple[str, float]]]:
    """What to try next, best first: (spec item, its recommendation; None for a `tries` item
    bootlab does not recommend; `tries` come first),
    skipping what was tried or contradicts the kept settings; and the savings that need a
    rebuild (title, predicted ms), from the recommendations of `sessions`."""
    found: list[Recommendation] = []
    for path in sessions:
        source = open_source(path)
        found += advise(source, analyze_source(source, profile))
    known = {s.id for s in settings}
    out: list[tuple[str, Recommendation | None]] = []
    rebuild: list[tuple[str, float]] = []
    for rec in rank(found):
        if rec.setting is None:
            rebuild.append((rec.title, rec.predicted_ms))
            continue
        item = parse_variant(rec.variant)[1] if rec.variant else rec.setting
        if rec.setting in known:
            out.append((item, rec))
    tried = state.tried()
    usable: list[tuple[str, Recommendation | None]] = []
    predicted = dict(out)  # a tried item bootlab recommends too keeps its prediction
    for item, reason in [*((t, predicted.get(t)) for t in tries), *out]:
        try:
            parse_spec(",".join([*state.kept, item]))
        except SpecError:
            continue  # already kept, or contradicts a kept setting
        if item not in tried and all(item != u for u, _ in usable):
            usable.append((item, reason))
    return usable, rebuild


def baseline_settled(values: Sequence[float], boots: int, most: int) -> bool:
    """Whether the baseline has boots enough: `BASELINE_FIRST` (or `most` if fewer), then one
    more at a time up to `most` while the goal's relative spread (standard deviation over
    median of `values`, seconds) is above `BASELINE_SPREAD`: a noisy board needs more boots
    before its median is worth comparing against."""
    if boots >= most:
        return True
    if boots < BASELINE_FIRST or len(values) < 2:
        return False
    return statistics.stdev(values) <= BASELINE_SPREAD * statistics.median(values)


def _baseline_values(state: TuneState, options: TuneOptions) -> list[float]:
    """The goal's times (s) in the baseline boots so far."""
    if not state.baseline:
        return []
    columns = compare.build_columns([
        compare.Entry(name, "boots", boot, options.reference) for name in state.baseline
        for boot in analyze_source(open_source(state.path.parent / name),
                                   options.profile).boots[:1]])
    return _goal_values(columns[0] if columns else None, options)


def run_tune(bench: Bench, state: TuneState, settings: Sequence[Setting],
             facts_of: Callable[[dict[str, str]], BoardFacts], options: TuneOptions,
             progress: Progress, clock: Callable[[], float] = time.monotonic) -> None:
    """Run (or resume) the tune of `state` until it finishes; the state is saved throughout.

    Raises:
        UBootError, ShellError, ConsoleTimeout, RuntimeError, SettingRefused: the board did
            not cooperate; the state keeps what was done, so the tune can be resumed.
    """
    started = clock()
    folder = state.path.parent
    env = bench.printenv()  # first: the board waits at its prompt while the sessions are read
    if not state.env_backup:
        state.env_backup = env
        state.save()
    while not baseline_settled(_baseline_values(state, options), len(state.baseline),
                               options.baseline_boots):
        first = not state.baseline
        ab = load_or_create(folder, f"{state.name}-0" if first else
                            f"{state.name}-0+{len(state.baseline)}", [(BASELINE, "")],
                            min(BASELINE_FIRST, options.baseline_boots) if first else 1)
        abrun.run_ab(bench, ab, settings, facts_of, options.ab, progress)
        state.baseline += _sessions(ab, BASELINE)
        state.save()
    progress(TuneBaseline(len(state.baseline), median_s(
        folder, state.baseline, options.profile, options.reference, options.ab.goal) or 0.0))
    current = state.final or state.baseline
    while not state.finished:
        median = median_s(folder, current, options.profile, options.reference,
                          options.ab.goal)
        if state.budget_s is not None and median is not None and median <= state.budget_s \
                and not options.keep_going:
            _finish(state, f"the budget is met: {options.ab.goal.name} at {median:.3f} s, "
                    f"budget {state.budget_s:g} s", progress)
            break
        if state.max_hours is not None and clock() - started >= state.max_hours * 3600:
            _finish(state, f"the time limit of {state.max_hours:g} h is reached", progress)
            break
        running = state.steps[-1] if state.steps and state.steps[-1].outcome == "running" \
            else None
        if running is None and options.max_steps is not None \
                and len(state.steps) >= options.max_steps:
            _finish(state, f"the limit of {options.max_steps} steps is reached", progress)
            break
        if running is None:
            found, state.rebuild = candidates(state, [folder / s for s in current], settings,
                                              options.profile, options.tries)
            progress(TuneRanked([(item, rec.title if rec else "asked for (--try)",
                                  rec.predicted_ms if rec else 0.0) for item, rec in found]))
            if not found:
                _finish(state, "nothing predicted is left to try", progress)
                break
            item, rec = found[0]
            running = TuneStep(item, rec.title if rec else "asked for (--try)",
                               rec.predicted_ms if rec else 0.0,
                               _ab_name(state, len(state.steps) + 1))
            state.steps.append(running)
            if rec is not None and rec.persist and not options.ab.persist:
                running.outcome, running.why = "rejected", \
                    "acts before the bootloader prompt: measured only with --persist"
                state.save()
                progress(TuneStepDone(running))
                continue
            state.save()
        progress(TuneStepStarted(running))
        kept = _step(bench, state, running, settings, facts_of, options, progress)
        progress(TuneStepDone(running))
        if kept is not None:
            current = kept
    state.commands = final_commands(bench, state, settings, facts_of, options)
    if state.persist and state.kept:
        typed = [c for c in state.commands if c != "saveenv" and not c.startswith("edit ")]
        bench.apply(typed, persist=True)
        for edit in (c for c in state.commands if c.startswith("edit ")):
            bench.say(f"kept, but not made permanent by the tune (its runs put the file back): "
                      f"{edit}")
    state.save()


def median_s(folder: Path, sessions: Sequence[str], profile: Profile, reference: str,
             goal: Goal) -> float | None:
    """The goal's median over these session files, seconds (None: none reached it)."""
    columns = compare.build_columns([
        compare.Entry(name, "boots", boot, reference)
        for name in sessions for boot in
        analyze_source(open_source(folder / name), profile).boots[:1]])
    values = [] if not columns else columns[0].values.get(abrun.goal_milestone(goal), [])
    return statistics.median(values) if values else None


def _finish(state: TuneState, why: str, progress: Progress) -> None:
    state.finished, state.stopped_why = True, why
    state.save()
    progress(TuneFinished(state))


def _step(bench: Bench, state: TuneState, step: TuneStep, settings: Sequence[Setting],
          facts_of: Callable[[dict[str, str]], BoardFacts], options: TuneOptions,
          progress: Progress) -> list[str] | None:
    """A/B-test the step's setting against the kept ones and decide it; the sessions of the
    new best configuration when kept, else None."""
    assert step.ab_name is not None
    name = _variant_name(step.setting)
    ab = load_or_create(state.path.parent, step.ab_name,
                        [(KEPT, state.spec()), (name, ",".join([*state.kept, step.setting]))],
                        options.max_boots, until_effect_s=options.effect_s)
    before = bench.printenv()

    def forward(event: TuneEvent | abrun.ABEvent) -> None:
        progress(event)
        if isinstance(event, abrun.BootFinished) and not event.reached and event.variant == name:
            raise _Missed

    try:
        abrun.run_ab(bench, ab, settings, facts_of, options.ab, forward,
                     lambda s: abrun.judge_look(s, options.profile, options.reference,
                                                options.ab.goal))
    except _Missed:
        _undo(bench, before, options.ab.persist)
        step.outcome = "harmful"
        step.why = (f"a boot with it did not reach {options.ab.goal.name} within "
                    f"{options.ab.timeout_s:g} s; the board was reset and the setting undone")
        state.save()
        return None
    except NotInForce as error:
        _undo(bench, before, options.ab.persist)
        step.outcome, step.why = "rejected", f"not in force: {error}"
        state.save()
        return None
    except SettingRefused as error:  # said before any boot of the step: nothing to undo
        step.outcome, step.why = "rejected", f"not in force (never measured): {error}"
        state.save()
        return None
    result = abrun.report(ab, options.profile, options.reference, settings, options.ab.goal,
                          options.effect_s)
    columns = {column.name: column for column in result.columns}
    base_values = _goal_values(columns.get(KEPT), options)
    other_values = _goal_values(columns.get(name), options)
    step.boots = min(len(base_values), len(other_values))
    index = ab.design.looks.index(ab.until.judged[-1].boots) if ab.until and ab.until.judged \
        else len(ab.design.looks) - 1
    look = sequential.look(ab.design, index, base_values, other_values, options.effect_s)
    diff = None if look.diff is None else \
        (-look.diff.mean * 1000, -look.diff.high * 1000, -look.diff.low * 1000)
    if diff is not None:
        step.saving_ms, step.low_ms, step.high_ms = diff
    step.evidence = (*next((lines for variant, lines in result.evidence if variant == name), ()),
                     *(f"caveat: {caveat}" for caveat in result.caveats))
    step.outcome, step.why = decide(diff, look.verdict, step.boots,
                                    lost_milestones(state.path.parent, _sessions(ab, KEPT),
                                                    _sessions(ab, name), options.profile,
                                                    _removed_by(step.setting, settings)),
                                    options.effect_s)
    if step.outcome == "kept":
        state.kept.append(step.setting)
        state.final = _sessions(ab, name)
    state.save()
    return state.final if step.outcome == "kept" else None


def _undo(bench: Bench, before: dict[str, str], persist: bool) -> None:
    """After a boot that missed its goal or showed its setting not in force: put the board's
    environment back as it was before the step (saved again when the step saved it)."""
    now = bench.printenv()
    commands = abvariants.sync_commands(now, before, sorted(set(now) | set(before)))
    bench.apply(commands, persist=persist and bool(commands))


def final_commands(bench: Bench, state: TuneState, settings: Sequence[Setting],
                   facts_of: Callable[[dict[str, str]], BoardFacts],
                   options: TuneOptions) -> list[str]:
    """The U-Boot commands that set the kept settings by hand, from the environment saved
    before the first change, ending in `saveenv`, then the edit of a boot file that carries
    kernel parameters, where one does ([] when nothing was kept)."""
    if not state.kept:
        return []
    planned = plan_run(bench, {"final": parse_spec(state.spec())}, settings, state.env_backup,
                       facts_of(state.env_backup), PlanOptions(
                           options.ab.force, options.ab.from_linux, True, options.ab.goal,
                           options.ab.timeout_s, learn=False), bench.say)
    the_plan, commands, _ = planned.plans["final"]
    return [*commands, "saveenv", *file_lines(the_plan, planned.source, planned.route)]


def restore(bench: Bench, state: TuneState) -> list[str]:
    """Put the board's environment back as the tune found it (`env_backup`): each changed
    variable set back or deleted, saved when the tune saved its settings (`persist`). Returns
    the commands sent ([] when nothing had changed)."""
    now = bench.printenv()
    commands = abvariants.sync_commands(now, state.env_backup,
                                        sorted(set(now) | set(state.env_backup)))
    if commands:
        bench.apply(commands, persist=state.persist)
    return commands
