"""What applying settings types: `plan` turns the user's choices into U-Boot commands.

The commands put the choices in force at `=> ` (quoted for the board's parser by `hush`), the
commands that undo them, warnings, and the record of what is in force that goes into the
session file. Kernel parameters are written where the board takes them
(`cmdline.locate_bootargs`). The plan is computed from the environment as it is, so the same
choices always give the same commands, and turning a setting off is just another choice.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bootlab.core.board.applicability import applicable, fact_value
from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.cmdline import (
    Edit,
    Target,
    locate_bootargs,
    split_cmdline,
    token_name,
    token_value,
)
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.hush import script_references, setenv_command
from bootlab.core.board.kernel_read import kernel_read, trimmed_script
from bootlab.core.board.settings import Setting, State

LINE_LIMIT = 256
"""Commands longer than this may not fit U-Boot's line buffer (CONFIG_SYS_CBSIZE is 256 on
many boards)."""


@dataclass(frozen=True)
class Plan:
    """What choosing settings means for a board: commands to type and what will be in force."""

    commands: list[str]
    """Exact U-Boot commands, in order (a baud rate change comes last, before saveenv)."""
    revert: list[str]
    """Commands that restore the environment as it was."""
    warnings: list[str]
    record: dict[str, Any]
    """For the session header's "settings": {"bootloader": {var: value or None},
    "cmdline": the kernel command line, "chosen": {setting id: choice}}."""
    env_after: dict[str, str]
    cmdline: str | None
    """The command line the kernel will get (None: unknown)."""
    baud: int | None = None
    """The console rate after the commands: switch the port to it when U-Boot asks for Enter
    ("## Switch baudrate to N bps and press ENTER ...")."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Chosen settings left out: id -> why (not applicable, refused, bad value)."""
    persist: bool = False
    """`saveenv` ends both command lists."""
    refused: dict[str, str] = field(default_factory=dict)
    """Chosen settings this board cannot take through its environment (a file gives the
    kernel its arguments): id -> why. Also in `skipped`; a run refuses them before booting."""
    file_edits: tuple[Edit, ...] = ()
    """The refused settings as edits of the file's command line (`ArgSource.edited`): what
    the `--from-linux` file route writes instead."""


def _problem(setting: Setting, value: str | None, facts: BoardFacts,
             forced: bool) -> str | None:
    needs_value = setting.kind in ("uboot_var", "baudrate", "cmdline_value", "cmdline_text")
    if needs_value and value is None:
        return "needs a value"
    if value is not None and setting.kind in ("baudrate", "read_trim") \
            and not (value.isdigit() and int(value) > 0):
        return f"{value!r} is not a whole number"
    if value is not None and setting.validate and not re.fullmatch(setting.validate, value):
        return f"{value!r} is not a valid value (expected {setting.validate})"
    if value is not None and value in setting.refuse and not forced:
        return f"refused: {setting.refuse[value]}"
    ok, why = applicable(setting, facts)
    return None if ok or forced else why


def plan(settings: Sequence[Setting], chosen: Mapping[str, State], env: Mapping[str, str],
         facts: BoardFacts, *, force: Collection[str] = (), persist: bool = False,
         source: ArgSource | None = None) -> Plan:
    """The commands that put the chosen settings in force, and what they lead to.

    Args:
        settings: the settings known (`load_settings`); their order is the commands' order.
        chosen: setting id -> True (on), False (off) or a value (on, with that value).
            Settings not named are left as the board has them.
        env: the environment now (`hush.parse_printenv`); it replaces `facts.env`.
        facts: what the log showed (`facts_from_log`).
        force: ids whose refusals and "not applicable" are overridden.
        persist: end with `saveenv` (else the changes last until the next reset).
        source: where the kernel's arguments come from (`argsource.locate`); when the
            environment cannot change them, kernel parameters are refused, and when a script
            or extlinux.conf builds them from variables, they are edited through those.

    Raises:
        ValueError: `chosen` names an unknown setting.
    """
    env = dict(env)
    facts = facts.with_env(env)
    default = source.file.where if source is not None and source.file is not None \
        and facts.kernel_cmdline is None and source.cmdline is not None else None
    if default is not None and source is not None:  # a boot script's default for bootargs
        facts = replace(facts, kernel_cmdline=source.cmdline)
    known = {s.id for s in settings}
    unknown = sorted(set(chosen) - known)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
    warnings: list[str] = []
    skipped: dict[str, str] = {}
    refused: dict[str, str] = {}
    file_edits: list[Edit] = []
    changes: dict[str, str | None] = {}
    edits: list[Edit] = []
    trims: list[tuple[Setting, int]] = []
    baud: tuple[str, int] | None = None
    on: list[Setting] = []
    for setting in settings:
        if setting.id not in chosen:
            continue
        state = chosen[setting.id]
        if source is not None and not source.env_can_change and source.confirmed \
                and setting.kind.startswith("cmdline"):
            refused[setting.id] = skipped[setting.id] = source.refusal(setting.name
                                                                       or setting.title)
            warnings.append(refused[setting.id])
            if state is False:
                _switch_off(setting, {}, file_edits)
            else:
                file_edits += _cmdline_edits(setting, state if isinstance(state, str)
                                             else setting.value)
            continue
        if state is False:
            _switch_off(setting, changes, edits)
            continue
        value = state if isinstance(state, str) else (setting.value
                                                      or fact_value(setting, facts))
        problem = _problem(setting, value, facts, setting.id in force)
        if problem is not None:
            skipped[setting.id] = problem
            warnings.append(f"{setting.title}: {problem}")
            continue
        on.append(setting)
        if setting.warn:
            warnings.append(f"{setting.title}: {setting.warn.replace('{value}', value or '')}")
        if setting.kind == "uboot_var" and setting.var and value is not None:
            changes[setting.var] = value
        elif setting.kind == "baudrate" and setting.var and value is not None:
            baud = (setting.var, int(value))
            edits.append(Edit("baud", baud=int(value)))
        elif setting.kind == "read_trim":
            trims.append((setting, int(value) if value else setting.page))
        else:
            edits += _cmdline_edits(setting, value)
    ids = {s.id for s in on}
    for setting in on:
        warnings += [f"{setting.title}: {text}" for other, text in setting.conflicts.items()
                     if other in ids and text]
    after = dict(env)
    _merge(after, changes)
    target = locate_bootargs(after) if source is None or source.target is None else source.target
    if edits and source is not None and not source.env_can_change:
        warnings.append(f"the console rate on the kernel command line stays as it is: "
                        f"{source.describe()}")
    elif edits:
        if "bootargs" not in env and facts.kernel_cmdline and target.add_to == "bootargs":
            origin = f"the default in {default}" if default else \
                "the kernel command line in the log"
            warnings.append(f"bootargs is unset: starting from {origin} ({facts.kernel_cmdline})")
        if target.others:
            warnings.append(f"bootargs is also built by {', '.join(target.others)} (another "
                            "boot path): those are not changed")
        applied = target.apply(after, edits, facts.kernel_cmdline)
        warnings += applied.warnings
        changes.update(applied.changes)
        _merge(after, applied.changes)
    for setting, page in trims:
        found = kernel_read(facts.with_env(after), page, setting.spare_pages)
        if isinstance(found, str):
            skipped[setting.id] = found
            warnings.append(f"{setting.title}: {found}")
            continue
        read, size = found
        changes[read.var] = after[read.var] = trimmed_script(after, read, size)
    if baud is not None:
        changes.pop(baud[0], None)
        changes[baud[0]] = after[baud[0]] = str(baud[1])
    commands, revert = _commands(changes, env, after, facts.hush, warnings)
    if facts.hush:
        warnings += _reread_warnings(changes, after, target)
    final = locate_bootargs(after) if source is None or source.target is None else source.target
    cmdline = final.cmdline(after, facts.kernel_cmdline) or None
    if source is not None and not source.env_can_change and source.confirmed:
        cmdline = source.cmdline  # the file's line, whatever the environment holds
    if baud is not None and cmdline is not None \
            and not re.search(rf"\bconsole=[^\s,]+,{baud[1]}\b", cmdline):
        warnings.append(f"no console=DEVICE,{baud[1]} on the kernel command line: the kernel's "
                        "console keeps the rate the device tree or its default gives")
    if persist:
        commands.append("saveenv")
        revert.append("saveenv")
    relevant = [s.var for s in settings if s.var] + ["bootargs", target.var, *changes]
    record = {"bootloader": {var: after.get(var) for var in dict.fromkeys(relevant)},
              "cmdline": cmdline,
              "chosen": {s.id: chosen[s.id] for s in settings
                         if s.id in chosen and s.id not in skipped}}
    return Plan(commands, revert, warnings, record, after, cmdline,
                baud[1] if baud else None, skipped, persist, refused, tuple(file_edits))


def _switch_off(setting: Setting, changes: dict[str, str | None], edits: list[Edit]) -> None:
    if setting.kind == "uboot_var" and setting.var and setting.off != "restore":
        changes[setting.var] = None if setting.off == "delete" else setting.off
    elif setting.kind in ("cmdline_flag", "cmdline_value") and setting.name:
        edits.append(Edit("remove", setting.name))


def _cmdline_edits(setting: Setting, value: str | None) -> list[Edit]:
    if setting.kind == "cmdline_remove" and setting.name:
        return [Edit("remove", setting.name)]
    if setting.kind == "cmdline_text":
        words = split_cmdline(value or "")
    else:
        words = [setting.name if setting.kind == "cmdline_flag" or value is None
                 else f"{setting.name}={value}"] if setting.name else []
    return [Edit("set", token_name(w), token_value(w)) for w in [*words, *setting.also]]


def _merge(env: dict[str, str], changes: Mapping[str, str | None]) -> None:
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value


def _reread_warnings(changes: Mapping[str, str | None], after: dict[str, str],
                     target: Target) -> list[str]:
    """Warn where hush will re-read quotes or backslashes in a value a script expands."""
    refs = script_references(after)
    cmdline_vars = {"bootargs", *script_references({"": target.template})}
    warnings = []
    for name, value in changes.items():
        if value is None or (name not in refs and name not in cmdline_vars):
            continue
        risky = sorted({c for c in value if c in "'\\" or (c == '"' and refs.get(name))})
        if risky:
            warnings.append(
                f"{name} holds {' '.join(risky)}: U-Boot's hush re-reads a variable's text "
                "where a script expands it (`setenv bootargs ${bootargs} ...`, a boot script's "
                "`test -z \"${bootargs}\"`) and takes these as quotes or escapes again: the "
                "kernel may get another line, or the script fails with \"syntax error\" and "
                "falls back to its default")
    return warnings


def _commands(changes: Mapping[str, str | None], before: dict[str, str],
              after: dict[str, str], hush: bool,
              warnings: list[str]) -> tuple[list[str], list[str]]:
    commands: list[str] = []
    revert: list[str] = []
    for name, value in changes.items():
        old = before.get(name)
        if value == old:
            continue
        try:
            command = setenv_command(name, value, hush)
            undo = setenv_command(name, old, hush)
        except ValueError as error:
            warnings.append(f"{name} is left as it is: {error}")
            _merge(after, {name: old})
            continue
        if len(command) > LINE_LIMIT:
            warnings.append(f"`setenv {name} ...` is {len(command)} characters: more than "
                            f"U-Boot's line buffer holds on many boards ({LINE_LIMIT}); check "
                            "the echo")
        commands.append(command)
        revert.append(undo)
    return commands, revert
