"""Each setting's state as a boot shows it, and where that is shown.

`settings_evidence` says, for every setting, what was in force in one boot and why: the line
or the record that shows it. Sources, strongest first:

1. the setting's `log` rules (`evidence` in builtin.toml): what the console showed (the
   countdown, printk stamps, `Verifying Checksum`);
2. the command line the kernel printed (`Kernel command line:`), for kernel parameters;
3. the setting's `inferred` rules: what the missing lines imply (no countdown, no kernel info
   lines before user space);
4. the session header: the settings bootlab put in force (`settings`) and the port's baud;
5. the U-Boot environment read from the board (`printenv`).

The first source that decides wins: the log says what was in force in that boot even when the
environment now says otherwise (a `setenv` since) or the command line is silent (a kernel
default such as CONFIG_PRINTK_TIME). The sources that disagree are kept beside it
(`Evidence.against`). dmesg output holds every message whatever the console printed, with
times dmesg prints itself: from it only the command line counts.

`read_evidence` reads the log and the session (the part that costs, run on a worker in the
app); `weigh` adds the environment and decides. Values from the session header and the
environment are cleaned like device text (session files get shared).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from bootlab.core.analysis.bootlog import BootLog
from bootlab.core.analysis.phases import ParsedLine
from bootlab.core.board.cmdline import Cmdline, locate_bootargs, render_param
from bootlab.core.board.evidence_rules import EvidenceRule
from bootlab.core.board.settings import Setting
from bootlab.core.capture.text import clean

How = Literal["log", "inferred", "session", "environment"]
CMDLINE_PREFIX = "Kernel command line:"
PRINTED = "the command line the kernel printed"
_TRUE = {"1", "y", "yes", "true", "on"}
_FALSE = {"0", "n", "no", "false", "off"}


@dataclass(frozen=True)
class Evidence:
    """What shows a setting's state in a boot."""

    state: bool
    """The setting is in force (on) or not (off)."""
    value: str | None
    """The value seen (a countdown's start, a parameter's value, the baud), when there is one."""
    how: How
    note: str
    """Why, in words."""
    line: int | None = None
    """The line that shows it (1-based, in the log read)."""
    text: str | None = None
    """That line, as shown."""
    kernel_default: str | None = None
    """The parameter is on no command line known: the kernel's own default (this) decided."""
    against: tuple[Evidence, ...] = ()
    """Weaker sources that say otherwise."""

    @property
    def source(self) -> str:
        """Where it comes from, in a word or two: `log 13`, `inferred`, `session`, `env`."""
        if self.how == "log":
            return f"log {self.line}" if self.line is not None else "log"
        return "env" if self.how == "environment" else self.how


Found = dict[str, tuple[Evidence, ...]]
"""Setting id -> what the log and the session show about it, strongest first."""


def settings_evidence(settings: Sequence[Setting], log: BootLog | None,
                      meta: Mapping[str, Any] | None = None,
                      env: Mapping[str, str] | None = None) -> dict[str, Evidence]:
    """What each setting was in this boot, and what shows it (settings nothing shows are
    left out: their state is unknown).

    Args:
        settings: the settings known (`load_settings`).
        log: the boot (`bootlog.read_boot`), or None.
        meta: the session header (`settings`, `baud`), or None.
        env: the U-Boot environment read from the board, or None.
    """
    return weigh(settings, read_evidence(settings, log, meta), env)


def read_evidence(settings: Sequence[Setting], log: BootLog | None,
                  meta: Mapping[str, Any] | None = None) -> Found:
    """What the log and the session header show about each setting, strongest first."""
    printed = _printed_cmdline(log) if log is not None else None
    found: Found = {}
    for setting in settings:
        candidates: list[Evidence] = []
        if log is not None and log.console:
            candidates += _by_rules(setting, log, "log", printed)
        if printed is not None:
            line, cmdline = printed
            decided = _cmdline_state(setting, cmdline)
            if decided is not None:
                candidates.append(Evidence(*decided, "log",
                                           _cmdline_note(setting, cmdline, PRINTED),
                                           line.number, line.text))
        if log is not None and log.console:
            candidates += _by_rules(setting, log, "inferred", printed)
        candidates += _from_session(setting, meta or {})
        if candidates:
            found[setting.id] = tuple(candidates)
    return found


def weigh(settings: Sequence[Setting], found: Found,
          env: Mapping[str, str] | None = None) -> dict[str, Evidence]:
    """Decide each setting: the strongest source, with the environment as the last one and
    the sources that disagree kept beside it."""
    env_line = _env_cmdline(env)
    decided: dict[str, Evidence] = {}
    for setting in settings:
        candidates = [*found.get(setting.id, ()), *_from_env(setting, env or {}, env_line)]
        if not candidates:
            continue
        first = candidates[0]
        decided[setting.id] = replace(
            first, against=tuple(c for c in candidates[1:] if _disagree(first, c)))
    return decided


def state_word(evidence: Evidence | None, applies: bool) -> str:
    """A setting's state as the settings pane and `bootlab settings --from` show it: on or off
    as the boot shows it, `n/a` when it does not apply to the board (`applicability.applicable`)
    and is not in force, `unknown` when nothing shows it."""
    if evidence is not None and (evidence.state or applies):
        return "on" if evidence.state else "off"
    return "unknown" if applies else "n/a"


def same_value(a: str, b: str) -> bool:
    """Two values mean the same: equal, or the same yes/no however it is spelt (`1`, `y`,
    `yes`, `on`; U-Boot's and the kernel's boolean parsers take these)."""
    a, b = a.strip().lower(), b.strip().lower()
    for group in (_TRUE, _FALSE):
        if a in group or b in group:
            return a in group and b in group
    return a == b


def cmdline_state(setting: Setting, text: str, where: str) -> tuple[bool, str | None, str] | None:
    """On or off, the value, and why, as a command line read elsewhere (`/proc/cmdline` after
    login) shows a kernel parameter; None when it does not tell. `where` names it in the why."""
    cmdline = Cmdline.parse(clean(text))
    decided = _cmdline_state(setting, cmdline)
    return None if decided is None else (*decided, _cmdline_note(setting, cmdline, where))


def _disagree(a: Evidence, b: Evidence) -> bool:
    return a.state != b.state or (a.value is not None and b.value is not None
                                  and not same_value(a.value, b.value))


# --- the log -------------------------------------------------------------------------------

def _printed_cmdline(log: BootLog) -> tuple[ParsedLine, Cmdline] | None:
    """The last `Kernel command line:` of the boot (a bootloader may print one before the
    kernel's own)."""
    for line in reversed(log.lines):
        if line.message.startswith(CMDLINE_PREFIX):
            return line, Cmdline.parse(line.message[len(CMDLINE_PREFIX):])
    return None


def _by_rules(setting: Setting, log: BootLog, how: str,
              printed: tuple[ParsedLine, Cmdline] | None) -> list[Evidence]:
    """The first of the setting's rules of this kind that decides, as evidence."""
    for rule in setting.evidence:
        if rule.how != how:
            continue
        decided = rule.apply(log)
        if decided is None:
            continue
        line, value = decided
        state = _rule_state(rule, setting, value)
        if state is None:
            continue
        default = None
        if setting.kernel_default and setting.name and printed is not None \
                and not printed[1].has(setting.name):
            default = setting.kernel_default
        note = rule.note.replace("{value}", value or "?")
        return [Evidence(state, value, rule.how, note, line.number, line.text, default)]
    return []


def _rule_state(rule: EvidenceRule, setting: Setting, value: str | None) -> bool | None:
    if rule.state is not None:
        return rule.state
    if value is None:
        return None
    return same_value(value, setting.value) if setting.value is not None else True


def _cmdline_state(setting: Setting,
                   cmdline: Cmdline) -> tuple[bool, str | None] | None:
    """On or off (and the value) as a command line shows a kernel parameter; None when it
    does not tell (a free-form setting, or an absent parameter with a kernel default)."""
    name = setting.name
    if name is None or not setting.kind.startswith("cmdline") or setting.kind == "cmdline_text":
        return None
    if not cmdline.has(name):
        if setting.kind == "cmdline_remove":
            return True, None
        return None if setting.kernel_default else (False, None)
    value = cmdline.get(name) or None
    if setting.kind == "cmdline_remove":
        return False, value
    if setting.kind == "cmdline_flag" or setting.value is None:
        return True, value
    return value is not None and same_value(value, setting.value), value


def _cmdline_note(setting: Setting, cmdline: Cmdline, where: str) -> str:
    name = setting.name or ""
    if not cmdline.has(name):
        return f"no {name} on {where}"
    return f"{render_param(name, cmdline.get(name) or None)} on {where}"


# --- the session header and the environment ------------------------------------------------

def _uboot_state(setting: Setting, value: str | None) -> bool | None:
    """On or off as a U-Boot variable's value shows it; None when unset means U-Boot's
    compiled default (a setting that is switched off by deleting it is off when unset)."""
    if value is None:
        return False if setting.off == "delete" else None
    return same_value(value, setting.value) if setting.value is not None else True


def _from_session(setting: Setting, meta: Mapping[str, Any]) -> list[Evidence]:
    record = meta.get("settings")
    record = record if isinstance(record, dict) else {}
    bootloader = record.get("bootloader")
    bootloader = bootloader if isinstance(bootloader, dict) else {}
    if setting.kind == "baudrate" and isinstance(meta.get("baud"), int):
        baud = str(meta["baud"])
        return [Evidence(True, baud, "session", f"the session was recorded at {baud} baud")]
    if setting.var is not None and setting.var in bootloader:
        value = bootloader[setting.var]
        value = clean(value) if isinstance(value, str) else None
        state = _uboot_state(setting, value)
        if state is None:
            return []
        shown = f"{setting.var}={value}" if value is not None else f"{setting.var} unset"
        return [Evidence(state, value, "session", f"the session records {shown}")]
    text = record.get("cmdline") or bootloader.get("bootargs")
    if isinstance(text, str):
        cmdline = Cmdline.parse(clean(text))
        decided = _cmdline_state(setting, cmdline)
        if decided is not None:
            return [Evidence(*decided, "session", _cmdline_note(
                setting, cmdline, "the command line the session records"))]
    return []


def _env_cmdline(env: Mapping[str, str] | None) -> Cmdline | None:
    """The command line the environment gives (None: it gives none, e.g. a boot script sets
    bootargs itself)."""
    if not env:
        return None
    variables = dict(env)
    text = locate_bootargs(variables).cmdline(variables)
    return Cmdline.parse(clean(text)) if text else None


def _from_env(setting: Setting, env: Mapping[str, str],
              cmdline: Cmdline | None) -> list[Evidence]:
    if not env:
        return []
    if setting.var is not None and setting.kind in ("uboot_var", "baudrate"):
        value = clean(env[setting.var]) if setting.var in env else None
        state = _uboot_state(setting, value)
        if state is None:
            return []
        shown = f"{setting.var}={value}" if value is not None else f"{setting.var} is unset"
        return [Evidence(state, value, "environment", f"the environment has {shown}")]
    if cmdline is not None:
        decided = _cmdline_state(setting, cmdline)
        if decided is not None:
            return [Evidence(*decided, "environment", _cmdline_note(
                setting, cmdline, "the command line the environment gives"))]
    return []
