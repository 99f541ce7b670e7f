"""Whether a setting applies to a board, and why or why not, from the board's facts.

`applicable` runs the setting's `applies_when` conditions, then what the setting itself needs
(the fact its value comes from, a kernel command line to edit, a raw kernel read to trim), and
says yes or no with a reason a user can act on ("not applicable: ...").
"""

from __future__ import annotations

from bootlab.core.analysis.profiles import STAGES
from bootlab.core.board.conditions import condition
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.kernel_read import kernel_read
from bootlab.core.board.settings import Setting


def fact_value(setting: Setting, facts: BoardFacts) -> str | None:
    """The value a setting takes from the board's facts (`value_from`), if they show it."""
    if setting.value_from == "lpj":
        return str(facts.lpj) if facts.lpj else None
    if setting.value_from == "rootfs_type":
        return facts.rootfs_type
    return None


def applicable(setting: Setting, facts: BoardFacts) -> tuple[bool, str]:
    """Whether a setting applies to this board, and why (or why not: "not applicable: ...")."""
    reasons: list[str] = []
    for text in setting.applies_when:
        check, arg = condition(text)
        ok, why = check(facts, arg)
        if not ok:
            return False, f"not applicable: {why}"
        reasons.append(why)
    problem = _intrinsic(setting, facts)
    if problem is not None:
        return False, f"not applicable: {problem}"
    if setting.kind == "read_trim":
        found = kernel_read(facts, setting.page, setting.spare_pages)
        if isinstance(found, str):
            return False, f"not applicable: {found}"
        read, size = found
        reasons.append(f"{read.command} in {read.var} reads {read.size:#x} bytes; "
                       f"{size:#x} hold the image")
    return True, "; ".join(reasons)


def _intrinsic(setting: Setting, facts: BoardFacts) -> str | None:
    if setting.value_from and fact_value(setting, facts) is None:
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


def not_yet(setting: Setting, facts: BoardFacts) -> bool:
    """Whether the boot has not reached the stage that would show this setting: a kernel
    parameter (or a value the kernel's log gives) before the kernel printed, a bootloader
    setting before the bootloader did. Its state is then "not yet", never "n/a"."""
    kernel = setting.kind.startswith("cmdline") or setting.value_from is not None
    needed = STAGES.index("kernel" if kernel else "bootloader")
    return not any(STAGES.index(stage) >= needed for stage in facts.stages
                   if stage in STAGES)
