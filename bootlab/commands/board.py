"""`bootlab boot`: drive the board through its bootloader and measure one boot (`bootlab ab`
is commands/ab.py)."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from bootlab.commands.bench import (
    board_facts,
    board_setup,
    cancelled,
    open_bench,
    probes_of,
    say,
)
from bootlab.commands.common import fail
from bootlab.control.board_console import ConsoleTimeout
from bootlab.control.engine import Bench, BootResult
from bootlab.control.linux import ShellError
from bootlab.control.linuxedit import LinuxRoute
from bootlab.control.planning import PlanOptions, SettingRefused, plan_run
from bootlab.control.promptedit import PromptRoute
from bootlab.control.routes import open_route, restore_outstanding, state_file_of
from bootlab.control.uboot import UBootError
from bootlab.core.analysis import budgets
from bootlab.core.analysis.compare import probe_figures
from bootlab.core.analysis.goals import GoalError
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.phases import Boot, table_rows
from bootlab.core.analysis.profiles import Profile, ProfileError
from bootlab.core.board.abplan import SpecError, parse_spec
from bootlab.core.board.plan import Plan
from bootlab.core.board.settings import SettingsError
from bootlab.core.capture.sources import open_source
from bootlab.core.render import tables
from bootlab.core.render.bootloader_stages import stage_lines
from bootlab.core.render.userspace import unit_lines
from bootlab.exitcodes import BAD_INPUT, NOT_MET, OK, PORT_FAILED
from bootlab.transports.port import PortError


def _print_result(result: BootResult, profile: Profile,
                  budget_file: budgets.BudgetFile | None) -> bool:
    """The measured boot's table, its sources' notes, its probes and, with `budget_file`,
    each budget's verdict; returns whether every budget was met."""
    source = open_source(Path(result.path))
    analysis = analyze_source(source, profile)
    for boot in analysis.boots[:1]:
        rows = table_rows(boot, "first-byte")
        width = max([22, *(len(tables.shown_name(row.milestone)) for row in rows)])
        for row in rows:
            m = row.milestone
            elapsed = "-" if row.elapsed_s is None else f"{row.elapsed_s:8.3f}"
            print(f"{tables.shown_name(m):{width}} {elapsed}  {m.text.strip()[:60]}")
        for line in [*stage_lines(boot, rows), *unit_lines(boot, rows)]:
            print(line)
        for note in tables.zero_notes([boot], "first-byte"):
            print(note)
        for said in (boot.collected, boot.ready):
            if said:
                print(said)
        for line in tables.apart_lines(boot):
            print(line)
    for name, figures in result.probes.items():
        for key, value in figures.items():
            print(f"probe {name}.{key} = {value:g}")
    if budget_file is None:
        return True
    return _verdicts(budget_file, analysis.boots[0] if analysis.boots else None,
                     probe_figures(source.meta))


def _verdicts(budget_file: budgets.BudgetFile, boot: Boot | None,
              figures: dict[str, float]) -> bool:
    """Each budget's verdict on the measured boot, as `bootlab check` says it."""
    if boot is None:
        say(f"no boot was recorded: the budgets of {budget_file.path} are not met")
        return False
    verdicts = budgets.evaluate(budget_file, boot, figures)
    for verdict in verdicts:
        print(f"{'PASS' if verdict.passed else 'FAIL'}  {verdict.message()}")
    met = sum(v.passed for v in verdicts)
    say(f"{met} of {len(verdicts)} budgets met ({budget_file.path})")
    return met == len(verdicts)


def _budget_file(args: argparse.Namespace, profile: Profile) -> budgets.BudgetFile | None:
    """`--budget FILE`, read and checked against the profile before the board is touched.

    Raises:
        budgets.BudgetError: it cannot be read, or names no milestone of the profile.
    """
    if args.budget is None:
        return None
    found = budgets.load_budgets(budgets.find_budget_file(args.budget))
    budgets.validate(found, profile.by_id)
    return found


def run_boot(args: argparse.Namespace) -> int:
    """One measured boot with the chosen settings (`--set ID[=VALUE]`, `--spec`)."""
    try:
        profile, goal, settings = board_setup(args)
        spec = parse_spec(",".join(args.set)) if args.set else []
        probes = probes_of(args)
        budget_file = _budget_file(args, profile)
    except (ProfileError, GoalError, SettingsError, SpecError, ValueError,
            budgets.BudgetError) as error:
        return fail(str(error), BAD_INPUT)
    meta = {"label": args.label, "board": args.board, "port": args.port, "baud": args.baud,
            "profile": profile.name}
    session = open_bench(args, profile, meta)
    if isinstance(session, int):
        return session
    code = OK
    try:
        if restore_first(args, session.bench):
            return OK
        env = session.bench.printenv()
        planned = plan_run(session.bench, {"boot": spec}, settings, env,
                           board_facts(args, env), PlanOptions(
                               tuple(args.force), args.from_linux, args.persist, goal,
                               args.timeout, learn=not args.dry_run), say)
        the_plan, commands, _ = planned.plans["boot"]
        if planned.source is not None:
            say(planned.source.describe())
        if planned.persist:
            commands.append("saveenv")
        _preview(the_plan, commands)
        if args.dry_run:
            return OK
        route = open_route(session.bench, planned)
        if planned.started and not isinstance(route, PromptRoute):
            session.bench.fresh_prompt()
        if isinstance(route, PromptRoute):
            route.apply(the_plan.file_edits)
        session.bench.apply(commands, persist=False, baud=the_plan.baud)
        arguments = planned.arguments()
        result = session.bench.boot(
            {"label": args.label, "settings": the_plan.record,
             **({} if arguments is None else {"arguments": arguments})}, planned.persist, goal,
            args.timeout, login=bool(args.login or args.probe or args.run), probes=probes,
            commands=tuple(args.run), from_linux=args.from_linux,
            at_shell=partial(route.apply, the_plan.file_edits)
            if isinstance(route, LinuxRoute) else None, collect=args.collect)
        session.recorder.writer.flush(sync=True)  # the file holds the whole boot before it is read
        incomplete = session.recorder.incomplete
        if route is not None:
            session.bench.setup_session(label="restore")
            restore_outstanding(session.bench, route.state_file, say, "the boot is measured")
        met = _print_result(result, profile, budget_file)
        for command, output in result.outputs.items():
            print(f"$ {command}\n{output}")
        if not met:
            code = NOT_MET
        if not result.reached:
            say(f"{goal.name}: {result.untimed}" if result.untimed
                else f"{goal.name} {goal.missed(result.milestones, args.timeout)}")
            code = NOT_MET
        elif incomplete is not None:
            say(f"the boot is {incomplete}")
            code = NOT_MET
    except SettingRefused as error:
        code = fail(f"{error} (no boot was measured)", BAD_INPUT)
    except KeyboardInterrupt:
        code = cancelled(session.bench)
    except (UBootError, ShellError, ConsoleTimeout, RuntimeError) as error:
        code = fail(str(error), NOT_MET)
    except PortError as error:
        code = fail(str(error), PORT_FAILED)
    finally:
        session.recorder.finish()
        session.close()
    return code


def _preview(the_plan: Plan, commands: list[str]) -> None:
    for setting, why in the_plan.skipped.items():
        say(f"not applied: {setting}: {why}")
    for warning in the_plan.warnings:
        say(f"warning: {warning}")
    for command in commands:
        say(f"will send: {command}")
    if the_plan.cmdline is not None and the_plan.record.get("chosen"):
        # With nothing to change, the line is only the environment's bootargs, which a board
        # whose arguments come from a file (extlinux.conf, boot.scr) never passes on.
        say(f"kernel command line: {the_plan.cmdline}")


def restore_first(args: argparse.Namespace, bench: Bench) -> bool:
    """Put back a file an earlier `--from-linux` run left edited on this bench's port (its
    state file says so); True when only that was asked (`--restore`)."""
    done = restore_outstanding(bench, state_file_of(bench), say, "an earlier run left it")
    port = bench.console.recorder.meta.get("port") or args.port
    if args.restore:
        say(f"{port}: the edited file is restored" if done else
             f"{port}: no edited file is outstanding")
    return bool(args.restore)


