"""What the main screen knows of the boots received: reference points, phase rows, the clock.

Plain state kept by the screen's handlers (no widgets): each batch's boot snapshot and newest
line update it, and the panes read from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from bootlab.core.lines import Line
from bootlab.core.phases import PhaseRow, phase_rows
from bootlab.ui.messages import BootSnapshot


class Timeline:
    """Boots, their reference times and phase rows, and the newest line's time."""

    def __init__(self, reference: str) -> None:
        """Args:
            reference: the profile's reference point: "first-byte" or a milestone id.
        """
        self.reference = reference
        self.boot: BootSnapshot | None = None
        """The boot being received."""
        self.rows: list[PhaseRow] = []
        """Its phase table."""
        self.references: dict[int, tuple[int, float]] = {}
        """Boot index -> (its first line number, its reference time in s)."""
        self.newest_line_s: float | None = None
        self._milestones_seen: tuple[int, int] | None = None

    def update(self, boot: BootSnapshot) -> bool:
        """Take the current boot; True when its milestones changed since the last call."""
        self.boot = boot
        zero = self._reference_s(boot)
        if zero is not None:
            self.references[boot.index] = (boot.first_line, zero)
        self.rows = phase_rows(boot.boot(), self.reference)
        seen = (boot.index, len(boot.milestones))
        changed = seen != self._milestones_seen
        self._milestones_seen = seen
        return changed

    def saw(self, lines: Sequence[Line], partial: Line | None) -> None:
        """Note the newest line received."""
        newest = partial or (lines[-1] if lines else None)
        if newest is not None and newest.t_ns is not None:
            self.newest_line_s = newest.t_ns / 1e9

    def since_reference(self, t_s: float | None) -> float | None:
        """Seconds from the current boot's reference point to `t_s` (session time)."""
        if t_s is None or self.boot is None or self.boot.index not in self.references:
            return None
        return t_s - self.references[self.boot.index][1]

    def boot_references(self) -> list[tuple[int, float]]:
        """(first line number, reference time) of every boot, in order (for the console)."""
        return sorted(self.references.values())

    def _reference_s(self, boot: BootSnapshot) -> float | None:
        if self.reference != "first-byte":
            for milestone in boot.milestones:
                if milestone.id == self.reference:
                    return milestone.host_s
        return boot.start_host_s
