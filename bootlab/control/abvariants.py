"""What each variant of an A/B run does to the board and must show, apart from the loop that
boots them (`abrun`): the commands that bring the U-Boot variables the variants touch to one
variant's values (`sync_commands`; the tune loop puts the environment back with it too), and
the claims each variant's boots are checked against (`variant_claims`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bootlab.control.planning import VariantPlan, synthetic
from bootlab.core.board.abplan import SpecItem
from bootlab.core.board.hush import setenv_command
from bootlab.core.board.settings import Setting, State
from bootlab.core.board.verify import Applied, Claim, run_claims


def sync_commands(current: Mapping[str, str], target: Mapping[str, str],
                  touched: Sequence[str]) -> list[str]:
    """Commands taking the variables the variants touch from `current` to `target`."""
    return [setenv_command(var, target.get(var)) for var in touched
            if current.get(var) != target.get(var)]


def variant_claims(settings: Sequence[Setting], specs: Mapping[str, Sequence[SpecItem]],
                   plans: Mapping[str, VariantPlan]) -> dict[str, tuple[Claim, ...]]:
    """What each variant's boots must show (`board.verify.run_claims`): every setting the
    variant names (spec items by their text), whatever its plan did with it, and raw U-Boot
    items that set a setting's variable."""
    applied: dict[str, Applied] = {}
    for name, spec in specs.items():
        extra, chosen, _ = synthetic(spec)
        by_id = {s.id: s for s in [*settings, *extra]}
        items = [(_label(by_id[ident], choice, spec), by_id[ident], choice)
                 for ident, choice in chosen.items() if ident in by_id]
        for item in spec:
            setting = next((s for s in settings if item.kind == "uboot" and s.var == item.name
                            and s.kind == "uboot_var"), None)
            if setting is not None and (item.value or setting.off == "delete"):
                items.append((str(item), setting, item.value or False))
        applied[name] = items
    return run_claims(applied, {name: plans[name][2] for name in specs})


def _label(setting: Setting, choice: State, spec: Sequence[SpecItem]) -> str:
    """A setting as the run names it: a spec item's text (`synthetic` numbers them), else
    `ID` or `ID=VALUE`."""
    if setting.id.startswith("spec_"):
        return str(spec[int(setting.id[len("spec_"):])])
    value = choice if isinstance(choice, str) else setting.value
    return setting.id if value is None else f"{setting.id}={value}"
