"""Boot-time settings as data: what each one changes, when it applies, and what is typed.

A setting (`bootdelay=0`, `quiet`, `lpj=N`, a trimmed kernel read, ...) is a `[[setting]]`
table in TOML: the built-ins in `bootlab/settings/builtin.toml` (which documents the schema),
plus the user's own in `settings/*.toml` beside the sessions or in the config folder. Keeping
them as data lets a user add a board's own knob without touching code.

Whether a setting applies is decided from what the board showed: `facts_from_log` reads the
boot log (through the same milestones as the phase table) and the U-Boot environment into
`BoardFacts`: was the delay loop calibrated or skipped, the `lpj` it found, the root
filesystem type, the kernel image size and how it was read. `applicable` says yes or no with
a reason a user can act on.

`plan` turns the user's choices into the exact commands to type at `=> ` (quoted for the
board's parser by `hush`), the commands that undo them, warnings, and the record of what is
in force that goes into the session file. Kernel parameters are written where the board takes
them (`cmdline.locate_bootargs`). The plan is computed from the environment as it is, so the
same choices always give the same commands, and turning a setting off is just another choice.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from bootlab.core.analysis import Analysis, analyze, parse_line
from bootlab.core.cmdline import (
    Cmdline,
    Edit,
    Target,
    locate_bootargs,
    split_cmdline,
    token_name,
    token_value,
)
from bootlab.core.config import DEFAULT_SESSIONS, config_dir
from bootlab.core.errors import LocatedError, line_of, toml_error_line
from bootlab.core.hush import check_name, run_chain, script_references, setenv_command
from bootlab.core.phases import Milestone
from bootlab.core.profiles import load_profile, user_pattern

Kind = Literal["uboot_var", "baudrate", "cmdline_flag", "cmdline_value", "cmdline_remove",
               "cmdline_text", "read_trim"]
KINDS: tuple[str, ...] = get_args(Kind)
State = bool | str
"""A choice: True (on, with the setting's own value), False (off) or a value (on, with it)."""
VALUE_FROM = ("lpj", "rootfs_type")
"""Facts a setting can take its value from."""
LINE_LIMIT = 256
"""Commands longer than this may not fit U-Boot's line buffer (CONFIG_SYS_CBSIZE is 256 on
many boards)."""
UIMAGE_HEADER = 64
"""Bytes of a legacy uImage header, which "Data Size" leaves out."""


class SettingsError(LocatedError):
    """A settings file could not be used; the message says where and why."""


@dataclass(frozen=True)
class Setting:
    """One setting, as read from TOML (see bootlab/settings/builtin.toml for the keys)."""

    id: str
    key: str
    """One character: the key that toggles it in the app."""
    title: str
    kind: Kind
    help: str = ""
    var: str | None = None
    """uboot_var, baudrate: the U-Boot variable."""
    name: str | None = None
    """cmdline kinds: the kernel parameter."""
    value: str | None = None
    """The value when switched on (a choice may give another)."""
    value_from: str | None = None
    """A fact the value is taken from: "lpj" or "rootfs_type"."""
    off: str = "restore"
    """uboot_var switched off: "restore" (leave it), "delete" or a value to set."""
    also: tuple[str, ...] = ()
    """Kernel parameters added along with it."""
    validate: str | None = None
    """Regular expression a value must match in full."""
    choices: tuple[str, ...] = ()
    refuse: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Value -> why it is refused unless forced."""
    applies_when: tuple[str, ...] = ()
    warn: str | None = None
    """Shown whenever it is applied; "{value}" is replaced by the value."""
    conflicts: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Other setting id -> warning shown when both are on."""
    page: int = 2048
    """read_trim: the flash page size in bytes."""
    spare_pages: int = 1
    """read_trim: pages read beyond the image."""
    source: str = "<built-in>"
    line: int | None = None


@dataclass(frozen=True)
class BoardFacts:
    """What a boot log and the U-Boot environment tell about a board."""

    env: dict[str, str] = field(default_factory=dict, hash=False)
    hush: bool = True
    """U-Boot reads commands with hush (else the simple parser)."""
    lines: tuple[str, ...] = ()
    """The last boot's messages (without stamps); only milestone lines for an Analysis."""
    milestones: frozenset[str] = frozenset()
    calibrate: str | None = None
    """The "Calibrating delay loop" line."""
    lpj: int | None = None
    calibration_skipped: bool = False
    """The kernel skipped the delay loop by itself (timer-based delay): lpj= saves nothing."""
    lpj_preset: bool = False
    """lpj= was on the command line ("preset value")."""
    rootfs_type: str | None = None
    image_bytes: int | None = None
    """The kernel image's "Data Size"."""
    image_format: Literal["legacy", "fit"] | None = None
    loaded_bytes: int | None = None
    """Bytes of the last load before the kernel started ("N bytes read")."""
    loaded_blocks: int | None = None
    """Blocks of that load when it was an `mmc read`."""
    kernel_cmdline: str | None = None
    """The "Kernel command line:" the kernel printed."""

    def with_env(self, env: Mapping[str, str]) -> BoardFacts:
        """The same facts with another environment."""
        return replace(self, env=dict(env))

    @property
    def target(self) -> Target:
        """Where the kernel command line comes from."""
        return locate_bootargs(self.env)

    def cmdline(self) -> Cmdline:
        """The command line in force: from the environment, else as the kernel printed it."""
        return Cmdline.parse(self.target.cmdline(self.env, self.kernel_cmdline))


def _int(value: int | float | str | None) -> int | None:
    return value if isinstance(value, int) else None


def facts_from_log(log: str | Sequence[str] | Analysis | None,
                   env: Mapping[str, str] | None = None, hush: bool = True) -> BoardFacts:
    """Learn a board's facts from a boot log and its environment.

    Args:
        log: the console text (a string or its lines), an `Analysis` of it (then only the
            milestones' lines are known), or None. With several boots, the last one counts.
        env: the U-Boot environment (`hush.parse_printenv`).
        hush: the board's U-Boot uses the hush parser.
    """
    milestones: list[Milestone] = []
    lines: list[str] = []
    if isinstance(log, Analysis):
        milestones = log.boots[-1].milestones if log.boots else []
        lines = [m.text for m in milestones]
    elif log is not None:
        data = (log if isinstance(log, str) else "\n".join(log)).encode("utf-8", "replace")
        analysis = analyze(data, load_profile("linux"))
        if analysis.boots:
            boot = analysis.boots[-1]
            milestones = boot.milestones
            raw_lines = data.split(b"\n")[boot.first_line - 1:]
            lines = [parse_line(n, raw, None).message for n, raw in enumerate(raw_lines, 1)]
    first: dict[str, Milestone] = {}
    last: dict[str, Milestone] = {}
    for milestone in milestones:
        first.setdefault(milestone.id, milestone)
        last[milestone.id] = milestone
    facts: dict[str, Any] = {}
    calibrate = first.get("calibrate")
    if calibrate is not None:
        preset = "preset" in calibrate.text
        facts.update(calibrate=calibrate.text, lpj=_int(calibrate.values.get("lpj")),
                     lpj_preset=preset,
                     calibration_skipped="(skipped)" in calibrate.text and not preset)
    if "image_info" in first:
        facts["image_bytes"] = _int(first["image_info"].values.get("image_bytes"))
    if "kernel_loaded" in last:
        values = last["kernel_loaded"].values
        facts.update(loaded_bytes=_int(values.get("bytes")),
                     loaded_blocks=_int(values.get("blocks")))
    facts["rootfs_type"] = _rootfs_type(first.get("root_mounted"))
    facts["image_format"] = _image_format(lines, first.get("kernel_verified"))
    for line in lines:
        if line.startswith("Kernel command line: "):
            facts["kernel_cmdline"] = line[len("Kernel command line: "):].strip()
    return BoardFacts(env=dict(env or {}), hush=hush, lines=tuple(lines),
                      milestones=frozenset(first), **facts)


def _rootfs_type(mounted: Milestone | None) -> str | None:
    if mounted is None:
        return None
    fstype = mounted.values.get("fstype")
    if isinstance(fstype, str):
        return fstype
    found = re.search(r"\b(EXT[234])-fs\b|\b(UBIFS)\b", mounted.text)
    return (found.group(1) or found.group(2)).lower() if found else None


def _image_format(lines: Sequence[str],
                  verified: Milestone | None) -> Literal["legacy", "fit"] | None:
    for line in lines:
        if "Legacy Image" in line:
            return "legacy"
        if "FIT Image" in line or "FIT image" in line:
            return "fit"
    if verified is not None:
        if "Hash Integrity" in verified.text:
            return "fit"
        if "Checksum" in verified.text:
            return "legacy"
    return None


# --- conditions ----------------------------------------------------------------------------

Check = Callable[[BoardFacts, str], tuple[bool, str]]


def _calibration_measured(facts: BoardFacts, _arg: str) -> tuple[bool, str]:
    if facts.calibrate is None:
        return False, ("the log has no \"Calibrating delay loop\" line (a quiet boot prints "
                       "none): boot once without quiet to learn lpj")
    if facts.calibration_skipped:
        return False, ("calibration is skipped on this CPU (the delay is computed from the "
                       "timer frequency), so lpj= saves nothing")
    if facts.lpj_preset:
        return True, f"lpj={facts.lpj} is preset: the delay loop is skipped"
    return True, f"the delay loop ran and measured lpj={facts.lpj}"


def _rootfs_known(facts: BoardFacts, _arg: str) -> tuple[bool, str]:
    if facts.rootfs_type is None:
        return False, "the log shows no root filesystem mount (VFS: Mounted root, EXT4-fs)"
    return True, f"the root filesystem is {facts.rootfs_type}"


def _hush(facts: BoardFacts, _arg: str) -> tuple[bool, str]:
    return facts.hush, "U-Boot uses hush" if facts.hush else "needs U-Boot's hush parser"


def _var(facts: BoardFacts, name: str) -> tuple[bool, str]:
    present = name in facts.env
    return present, f"{name} is {'set' if present else 'not set'} in the environment"


def _no_var(facts: BoardFacts, name: str) -> tuple[bool, str]:
    present, why = _var(facts, name)
    return not present, why


def _in_cmdline(facts: BoardFacts, name: str) -> tuple[bool, str]:
    present = facts.cmdline().has(name)
    return present, f"{name} is {'' if present else 'not '}on the kernel command line"


def _not_in_cmdline(facts: BoardFacts, name: str) -> tuple[bool, str]:
    present, why = _in_cmdline(facts, name)
    return not present, why


def _milestone(facts: BoardFacts, ident: str) -> tuple[bool, str]:
    seen = ident in facts.milestones
    return seen, f"milestone {ident} was {'' if seen else 'not '}seen in the log"


def _log(facts: BoardFacts, pattern: str) -> tuple[bool, str]:
    seen = any(re.search(pattern, line) for line in facts.lines)
    return seen, f"the log {'has' if seen else 'has no'} line matching {pattern!r}"


CONDITIONS: dict[str, tuple[Check, bool]] = {
    "calibration_measured": (_calibration_measured, False),
    "rootfs_known": (_rootfs_known, False),
    "hush": (_hush, False),
    "var": (_var, True),
    "no_var": (_no_var, True),
    "cmdline": (_in_cmdline, True),
    "no_cmdline": (_not_in_cmdline, True),
    "milestone": (_milestone, True),
    "log": (_log, True),
}
"""`applies_when` conditions: name -> (check, takes an argument after ":")."""


def _condition(text: str) -> tuple[Check, str]:
    name, _, arg = text.partition(":")
    check, wants_arg = CONDITIONS[name]
    return check, arg if wants_arg else ""


# --- applicability ------------------------------------------------------------------------

def _fact_value(setting: Setting, facts: BoardFacts) -> str | None:
    if setting.value_from == "lpj":
        return str(facts.lpj) if facts.lpj else None
    if setting.value_from == "rootfs_type":
        return facts.rootfs_type
    return None


def applicable(setting: Setting, facts: BoardFacts) -> tuple[bool, str]:
    """Whether a setting applies to this board, and why (or why not: "not applicable: ...")."""
    reasons: list[str] = []
    for text in setting.applies_when:
        check, arg = _condition(text)
        ok, why = check(facts, arg)
        if not ok:
            return False, f"not applicable: {why}"
        reasons.append(why)
    problem = _intrinsic(setting, facts)
    if problem is not None:
        return False, f"not applicable: {problem}"
    if setting.kind == "read_trim":
        found = _kernel_read(facts, setting.page, setting.spare_pages)
        if isinstance(found, str):
            return False, f"not applicable: {found}"
        read, size = found
        reasons.append(f"{read.command} in {read.var} reads {read.size:#x} bytes; "
                       f"{size:#x} hold the image")
    return True, "; ".join(reasons)


def _intrinsic(setting: Setting, facts: BoardFacts) -> str | None:
    if setting.value_from and _fact_value(setting, facts) is None:
        return f"the log does not show the {setting.value_from.replace('_', ' ')}"
    if setting.kind.startswith("cmdline"):
        target = facts.target
        if (target.add_to == "bootargs" and "bootargs" not in facts.env
                and target.template == "${bootargs}" and facts.kernel_cmdline is None):
            return ("bootargs is unset and the log shows no \"Kernel command line:\" to start "
                    "from (boot once without quiet)")
        if setting.kind == "cmdline_remove" and setting.name is not None \
                and not facts.cmdline().has(setting.name):
            return f"{setting.name} is not on the kernel command line"
    return None


def in_force(setting: Setting, facts: BoardFacts) -> str | bool | None:
    """What the board has now: the variable's or parameter's value (None: unset/absent),
    whether a flag is present, the current size of a trimmable read (hex)."""
    if setting.var is not None:
        return facts.env.get(setting.var)
    if setting.kind == "read_trim":
        reads = kernel_reads(facts.env)
        return f"{reads[0].size:#x}" if len(reads) == 1 else None
    if setting.name is None:
        return None
    line = facts.cmdline()
    if setting.kind in ("cmdline_flag", "cmdline_remove"):
        return line.has(setting.name)
    return line.get(setting.name)


# --- trimmed kernel read -------------------------------------------------------------------

def trimmed_read_size(image_bytes: int, page: int = 2048, spare_pages: int = 1,
                      header: int = UIMAGE_HEADER) -> int:
    """Bytes to read for an image: header + data rounded up to whole pages, plus spare pages.

    The spare page keeps a kernel rebuilt a little bigger loadable (a short read fails the
    checksum, or worse). 1,246,156 bytes with 2,048-byte pages: 609 pages + 1 = 0x131000.
    """
    pages = -(-(image_bytes + header) // page)
    return (pages + spare_pages) * page


@dataclass(frozen=True)
class KernelRead:
    """A raw flash read in one of bootcmd's scripts."""

    var: str
    """The variable whose script holds it."""
    device: str
    """nand, sf or mmc."""
    command: str
    """The command as written, e.g. "nand read ${loadaddr} 0x280000 0x400000"."""
    address: str
    size: int
    """Bytes it reads."""
    span: tuple[int, int]
    """Where its size (mmc: block count) argument sits in the variable's value."""


_READ = re.compile(r"(?<![\w$.-])(nand|sf|mmc)[ \t]+read(?:\.\w+)?((?:[ \t]+[^\s;]+){3})")
_KERNEL_ADDRESS = re.compile(r"loadaddr|kernel", re.IGNORECASE)


def kernel_reads(env: Mapping[str, str]) -> list[KernelRead]:
    """The `nand read ADDR OFF SIZE`, `sf read ADDR OFF LEN` and `mmc read ADDR BLK CNT`
    commands (size as a number; U-Boot reads it as hex) in the scripts bootcmd runs."""
    env = dict(env)
    reads: list[KernelRead] = []
    for path in run_chain(env):
        var = path[-1]
        script = env[var]
        for match in _READ.finditer(script):
            args = [(m.group(), m.start() + match.start(2), m.end() + match.start(2))
                    for m in re.finditer(r"[^\s;]+", match.group(2))]
            address, _, (count, start, end) = args[0][0], args[1], args[2]
            try:
                number = int(count, 16)
            except ValueError:
                continue  # a variable: its value is not ours to change here
            device = match.group(1)
            size = number * 512 if device == "mmc" else number
            reads.append(KernelRead(var, device, match.group(0).strip(), address, size,
                                    (start, end)))
    return reads


def _kernel_read(facts: BoardFacts, page: int,
                 spare_pages: int) -> tuple[KernelRead, int] | str:
    """The kernel's read and the size it can shrink to, or why it cannot."""
    reads = kernel_reads(facts.env)
    if not reads:
        return ("the kernel is not read from raw flash (no nand/sf/mmc read in bootcmd's "
                "scripts); a file load already reads just the file")
    if facts.image_bytes is None:
        return "U-Boot printed no \"Data Size\" for the kernel image, so its size is unknown"
    if facts.image_format == "fit":
        return ("the kernel is inside a FIT image: the read must cover the whole FIT, "
                "not the kernel's Data Size")
    picked = [r for r in reads if facts.loaded_bytes == r.size
              or (facts.loaded_blocks is not None and facts.loaded_blocks * 512 == r.size)]
    picked = picked or [r for r in reads if _KERNEL_ADDRESS.search(r.address)]
    picked = picked or (reads if len(reads) == 1 else [])
    if len({(r.var, r.span) for r in picked}) != 1:
        commands = "; ".join(f"{r.command} ({r.var})" for r in reads)
        return f"several flash reads ({commands}): cannot tell which one loads the kernel"
    read = picked[0]
    size = trimmed_read_size(facts.image_bytes, page, spare_pages)
    if read.device == "mmc":
        size = -(-size // 512) * 512
    if facts.image_bytes + UIMAGE_HEADER > read.size:
        return (f"the image ({facts.image_bytes} bytes) is bigger than the read "
                f"({read.size:#x}): the log does not match bootcmd")
    if size >= read.size:
        return f"the read ({read.size:#x} bytes) is already no bigger than the image needs"
    return read, size


def _trimmed_script(env: Mapping[str, str], read: KernelRead, size: int) -> str:
    count = size // 512 if read.device == "mmc" else size
    script = env[read.var]
    return f"{script[:read.span[0]]}{count:#x}{script[read.span[1]:]}"


# --- plans ---------------------------------------------------------------------------------

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
         facts: BoardFacts, *, force: Collection[str] = (), persist: bool = False) -> Plan:
    """The commands that put the chosen settings in force, and what they lead to.

    Args:
        settings: the settings known (`load_settings`); their order is the commands' order.
        chosen: setting id -> True (on), False (off) or a value (on, with that value).
            Settings not named are left as the board has them.
        env: the environment now (`hush.parse_printenv`); it replaces `facts.env`.
        facts: what the log showed (`facts_from_log`).
        force: ids whose refusals and "not applicable" are overridden.
        persist: end with `saveenv` (else the changes last until the next reset).

    Raises:
        ValueError: `chosen` names an unknown setting.
    """
    env = dict(env)
    facts = facts.with_env(env)
    known = {s.id for s in settings}
    unknown = sorted(set(chosen) - known)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
    warnings: list[str] = []
    skipped: dict[str, str] = {}
    changes: dict[str, str | None] = {}
    edits: list[Edit] = []
    trims: list[tuple[Setting, int]] = []
    baud: tuple[str, int] | None = None
    on: list[Setting] = []
    for setting in settings:
        if setting.id not in chosen:
            continue
        state = chosen[setting.id]
        if state is False:
            _switch_off(setting, changes, edits)
            continue
        value = state if isinstance(state, str) else (setting.value
                                                      or _fact_value(setting, facts))
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
    target = locate_bootargs(after)
    if edits:
        if "bootargs" not in env and facts.kernel_cmdline and target.add_to == "bootargs":
            warnings.append("bootargs is unset: starting from the kernel command line in the "
                            f"log ({facts.kernel_cmdline})")
        if target.others:
            warnings.append(f"bootargs is also built by {', '.join(target.others)} (another "
                            "boot path): those are not changed")
        applied = target.apply(after, edits, facts.kernel_cmdline)
        warnings += applied.warnings
        changes.update(applied.changes)
        _merge(after, applied.changes)
    for setting, page in trims:
        found = _kernel_read(facts.with_env(after), page, setting.spare_pages)
        if isinstance(found, str):
            skipped[setting.id] = found
            warnings.append(f"{setting.title}: {found}")
            continue
        read, size = found
        changes[read.var] = after[read.var] = _trimmed_script(after, read, size)
    if baud is not None:
        changes.pop(baud[0], None)
        changes[baud[0]] = after[baud[0]] = str(baud[1])
    commands, revert = _commands(changes, env, after, facts.hush, warnings)
    if facts.hush:
        warnings += _reread_warnings(changes, after, target)
    cmdline = locate_bootargs(after).cmdline(after, facts.kernel_cmdline) or None
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
                baud[1] if baud else None, skipped, persist)


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


# --- loading -------------------------------------------------------------------------------

_KEYS = {"id", "key", "title", "kind", "help", "var", "name", "value", "value_from", "off",
         "also", "validate", "choices", "refuse", "applies_when", "warn", "conflicts", "page",
         "spare_pages"}
_PARAM = re.compile(r"[A-Za-z0-9_.-]+")


def settings_dirs(sessions: Path | None = None) -> list[Path]:
    """Folders searched for user settings, nearest first: `<sessions>/settings`, then
    `<config dir>/settings` (beside the profile folders)."""
    return [(sessions or DEFAULT_SESSIONS) / "settings", config_dir() / "settings"]


def parse_settings(text: str, source: str = "<string>") -> list[Setting]:
    """Settings from a TOML document of `[[setting]]` tables.

    Raises:
        SettingsError: the TOML is malformed or a setting is invalid (file:line: reason).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(source, toml_error_line(error), f"not valid TOML: {error}") from None
    extra = set(data) - {"setting"}
    if extra:
        raise SettingsError(source, line_of(text, sorted(extra)[0]),
                            f"unknown table(s) {', '.join(sorted(extra))}: settings are "
                            "[[setting]] tables")
    entries = data.get("setting", [])
    if not isinstance(entries, list):
        raise SettingsError(source, line_of(text, "setting"),
                            "settings must be written as [[setting]] tables")
    settings: list[Setting] = []
    seen_line = 1
    for entry in entries:
        ident = entry.get("id") if isinstance(entry, dict) else None
        line = line_of(text, f'"{ident}"', seen_line) if isinstance(ident, str) else None
        seen_line = line or seen_line
        setting = _setting(entry, source, line)
        if any(s.id == setting.id for s in settings):
            raise SettingsError(source, line, f"setting {setting.id!r} is defined twice")
        settings.append(setting)
    return settings


def _text(entry: dict[str, Any], key: str, fail: Callable[[str], SettingsError],
          default: str | None = None) -> str | None:
    value = entry.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is not None and not isinstance(value, str):
        raise fail(f"{key} must be a string")
    return value


def _texts(entry: dict[str, Any], key: str,
           fail: Callable[[str], SettingsError]) -> tuple[str, ...]:
    values = entry.get(key, [])
    if not isinstance(values, list) or not all(isinstance(v, str | int) for v in values):
        raise fail(f"{key} must be a list of strings")
    return tuple(str(v) for v in values)


def _table(entry: dict[str, Any], key: str,
           fail: Callable[[str], SettingsError]) -> dict[str, str]:
    table = entry.get(key, {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise fail(f"{key} must be a table of strings, e.g. {{ \"-2\" = \"why\" }}")
    return {str(k): v for k, v in table.items()}


def _setting(entry: Any, source: str, line: int | None) -> Setting:
    if not isinstance(entry, dict):
        raise SettingsError(source, line, "each [[setting]] must be a table")
    ident = entry.get("id")

    def fail(reason: str) -> SettingsError:
        return SettingsError(source, line, f"setting {ident!r}: {reason}")

    if not isinstance(ident, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", ident):
        raise SettingsError(source, line, f"setting id {ident!r} must be lower_snake_case")
    unknown = set(entry) - _KEYS
    if unknown:
        raise fail(f"unknown key(s) {', '.join(sorted(unknown))}")
    key = entry.get("key")
    if not isinstance(key, str) or len(key) != 1 or not key.isprintable() or key.isspace():
        raise fail("key must be one printable character")
    title = _text(entry, "title", fail)
    if not title:
        raise fail("title is missing")
    kind = entry.get("kind")
    if kind not in KINDS:
        raise fail(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    var = _text(entry, "var", fail, "baudrate" if kind == "baudrate" else None)
    if kind in ("uboot_var", "baudrate"):
        if var is None:
            raise fail(f"a {kind} setting needs var = \"<U-Boot variable>\"")
        try:
            check_name(var)
        except ValueError as error:
            raise fail(str(error)) from None
    name = _text(entry, "name", fail)
    if kind in ("cmdline_flag", "cmdline_value", "cmdline_remove") and (
            name is None or not _PARAM.fullmatch(name)):
        raise fail(f"a {kind} setting needs name = \"<kernel parameter>\" "
                   "(letters, digits, _ . -)")
    value_from = _text(entry, "value_from", fail)
    if value_from is not None and value_from not in VALUE_FROM:
        raise fail(f"value_from must be one of {', '.join(VALUE_FROM)}")
    off = _text(entry, "off", fail, "restore") or "restore"
    validate = _text(entry, "validate", fail)
    if validate is not None:
        try:
            user_pattern(validate)
        except re.error as error:
            raise fail(f"bad validate pattern {validate!r}: {error}") from None
    also = _texts(entry, "also", fail)
    if any(len(split_cmdline(word)) != 1 for word in also):
        raise fail("each entry of also must be one kernel parameter")
    conditions = _texts(entry, "applies_when", fail)
    for text in conditions:
        cond, _, arg = text.partition(":")
        if cond not in CONDITIONS:
            raise fail(f"unknown condition {cond!r} (known: {', '.join(CONDITIONS)})")
        if CONDITIONS[cond][1] != bool(arg):
            raise fail(f"condition {cond!r} {'needs' if CONDITIONS[cond][1] else 'takes no'} "
                       "argument after ':'")
        if cond == "log":
            try:
                user_pattern(arg)
            except re.error as error:
                raise fail(f"bad log pattern {arg!r}: {error}") from None
    numbers: dict[str, int] = {}
    for number_key, default, least in (("page", 2048, 1), ("spare_pages", 1, 0)):
        number = entry.get(number_key, default)
        if not isinstance(number, int) or isinstance(number, bool) or number < least:
            raise fail(f"{number_key} must be a whole number >= {least}")
        numbers[number_key] = number
    return Setting(
        id=ident, key=key, title=title, kind=kind, help=_text(entry, "help", fail) or "",
        var=var, name=name, value=_text(entry, "value", fail), value_from=value_from,
        off=off, also=also, validate=validate, choices=_texts(entry, "choices", fail),
        refuse=_table(entry, "refuse", fail), applies_when=conditions,
        warn=_text(entry, "warn", fail), conflicts=_table(entry, "conflicts", fail),
        page=numbers["page"], spare_pages=numbers["spare_pages"], source=source, line=line)


def load_settings(search_dirs: Sequence[Path] = ()) -> list[Setting]:
    """The built-in settings, then the user's `*.toml` in `search_dirs` (nearest first; a
    setting with an id already known replaces it in place).

    Raises:
        SettingsError: a file is unreadable or invalid, two settings share a key, or a
            conflict names an unknown setting.
    """
    builtin = resources.files("bootlab") / "settings" / "builtin.toml"
    settings = parse_settings(builtin.read_text(encoding="utf-8"), "<built-in settings>")
    for folder in reversed(search_dirs):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise SettingsError(str(path), None, f"cannot read: {error}") from None
            for setting in parse_settings(text, str(path)):
                index = next((i for i, s in enumerate(settings) if s.id == setting.id), None)
                if index is None:
                    settings.append(setting)
                else:
                    settings[index] = setting
    ids = {s.id for s in settings}
    keys: dict[str, Setting] = {}
    for setting in settings:
        if setting.key in keys:
            raise SettingsError(setting.source, setting.line,
                                f"key {setting.key!r} of {setting.id!r} is already used by "
                                f"{keys[setting.key].id!r} ({keys[setting.key].source})")
        keys[setting.key] = setting
        for other in setting.conflicts:
            if other not in ids:
                raise SettingsError(setting.source, setting.line,
                                    f"setting {setting.id!r}: conflicts names unknown setting "
                                    f"{other!r}")
    return settings
