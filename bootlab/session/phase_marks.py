"""What the phase pane shows beside each milestone's own times: the baseline's time, the
budget and whether it was met, the goal's rows, a silent start (data only: no widget, no
source, so the pane imports nothing that reads a port)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BudgetState = Literal["pass", "fail", "open"]


@dataclass(frozen=True)
class BudgetMark:
    """A milestone's budget as the phase pane shows it."""

    limit_s: float
    """The budget on the pane's time axis (seconds since the reference)."""
    state: BudgetState
    """Reached within it, missed (reached late, or not reached and the time is up), or open."""


@dataclass(frozen=True)
class PhaseMarks:
    """What the phase pane shows beside each milestone's own times."""

    baseline_s: dict[str, float] | None = None
    """Milestone id -> its elapsed time in the baseline session (None: no baseline)."""
    baseline_name: str = ""
    budgets: dict[str, BudgetMark] = field(default_factory=dict)
    """Milestone id -> its budget."""
    goal: tuple[str, ...] = ()
    """The ids of the boot's goal (the rows marked as it)."""
    goal_every: bool = False
    """Each goal id is marked (the goal is each of them), not only the first reached."""
    note: str = ""
    """What the pane's lower border says of the boot: bytes lost in a gap (no total), or
    firmware before the first byte that printed nothing (its time is not in the pane); ""."""
