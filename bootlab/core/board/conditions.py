"""The conditions a setting's `applies_when` names: checks of a board's facts, each with the
reason a user can act on (`calibration_measured`, `var:NAME`, `log:PATTERN`, ...)."""

from __future__ import annotations

import re
from collections.abc import Callable

from bootlab.core.board.facts import BoardFacts

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


def condition(text: str) -> tuple[Check, str]:
    """The check an `applies_when` entry names, and its argument ("" when it takes none)."""
    name, _, arg = text.partition(":")
    check, wants_arg = CONDITIONS[name]
    return check, arg if wants_arg else ""
