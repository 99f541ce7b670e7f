"""A recommendation: one thing to try, the saving a boot's log predicts for it, the lines it is
based on and the A/B run that would measure it; `rank` merges those of several boots."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Recommendation:
    """One thing to try, with the saving the log predicts for it."""

    id: str
    title: str
    predicted_ms: float
    evidence: list[tuple[int, str]]
    """(line number, text) of the lines the prediction is based on."""
    setting: str | None
    """The settings id whose A/B run would test it (None: a build or image change)."""
    detail: str
    milestone: str
    """Where the saving shows: the boot's elapsed time to this milestone."""
    variant: str | None = None
    """`--variant` of an A/B run that tests it, e.g. "bootdelay0:bootdelay=0"."""
    persist: bool = False
    """The A/B needs `--persist` (the setting acts before the bootloader prompt)."""
    source: str = ""
    """The log the evidence lines are in."""
    boots: int = 1
    """Boots it was predicted from (the prediction is their median)."""
    low_ms: float | None = None
    """The smallest of those boots' predictions (None: one boot)."""
    high_ms: float | None = None
    """The largest of those boots' predictions (None: one boot)."""
    bound_ms: float | None = None
    """The most it could save, where the prediction is less (console output: every byte's
    time on the wire)."""
    caveat: str = ""
    """What the prediction assumes that this board's boots contradict, as a clause ('': none
    known): why an A/B run on this board may measure something else."""

    def ab_command(self, port: str = "PORT", boots: int = 5, route: Route | None = None
                   ) -> str | None:
        """The `bootlab ab` command line that measures this recommendation on its board
        (`route`: how a kernel parameter reaches it there); None when there is nothing to
        measure, or bootlab cannot apply it on that board (`Route.blocked`)."""
        route = route or Route()
        if self.variant is None or route.blocked:
            return None
        return (f"bootlab ab {port} --variant base: --variant {self.variant} --boots {boots}"
                + (" --from-linux" if route.from_linux else "")
                + (" --persist" if self.persist or route.from_linux else ""))


@dataclass(frozen=True)
class Route:
    """How a kernel parameter reaches a board, as a bootlab run on it found (the `arguments`
    its sessions record: `control.planning.RunPlan.arguments`)."""

    from_linux: bool = False
    """Only from Linux (`--from-linux --persist`): the file cannot be written at the prompt."""
    blocked: str | None = None
    """Why bootlab cannot apply a kernel parameter there at all."""


def route_for(kernel_parameter: bool, arguments: object) -> Route:
    """The route of a setting on a board whose sessions recorded `arguments` (anything else:
    nothing known, the plain command)."""
    if not kernel_parameter or not isinstance(arguments, dict):
        return Route()
    route = arguments.get("route")
    if route in ("linux", "linux only"):
        return Route(from_linux=True)
    if route is None:
        return Route(blocked=f"its kernel arguments come from {arguments.get('where')}, which "
                             "bootlab cannot edit")
    return Route()


def rank(recommendations: Iterable[Recommendation]) -> list[Recommendation]:
    """One recommendation per id (the median boot's, with the range), largest saving first."""
    groups: dict[str, list[Recommendation]] = {}
    for rec in recommendations:
        groups.setdefault(rec.id, []).append(rec)
    ranked = []
    for recs in groups.values():
        if len(recs) == 1:
            ranked.append(recs[0])
            continue
        ordered = sorted(recs, key=lambda r: r.predicted_ms)
        median = statistics.median_low([r.predicted_ms for r in ordered])
        chosen = next(r for r in ordered if r.predicted_ms == median)
        ranked.append(replace(chosen, boots=len(recs), low_ms=ordered[0].predicted_ms,
                              high_ms=ordered[-1].predicted_ms))
    return sorted(ranked, key=lambda r: -r.predicted_ms)
