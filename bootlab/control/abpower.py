"""Before an `--until-decided` A/B run: how much the goal varies on this bench, from the
boots already recorded there (`recorded_spread`), and so how many boots the run may take to
decide (`power_lines`, the power table `bootlab ab` prints). Apart from the loop (`abrun`):
nothing here touches a board.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bootlab.control.abrun import goal_milestone
from bootlab.core.analysis import sequential
from bootlab.core.analysis.goals import Goal
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.phases import phase_rows
from bootlab.core.analysis.profiles import Profile
from bootlab.core.capture.session import iter_sessions
from bootlab.core.capture.sources import SourceError, open_source

SPREAD_FILES = 400
"""The newest session files `recorded_spread` looks through."""
SPREAD_BOOTS = 60
"""Recorded boots enough for a board's spread."""


def _header(path: Path) -> dict[str, object]:
    """A session file's first line (its meta as recorded when it started), or {}."""
    try:
        with path.open("rb") as handle:
            header = json.loads(handle.readline(65536))
    except (OSError, ValueError):
        return {}
    return header if isinstance(header, dict) else {}


def recorded_spread(folder: Path, port: str | Sequence[str], profile: Profile, reference: str,
                    goal: Goal) -> tuple[float | None, int]:
    """The spread of the goal milestone over this port's (or these ports') recorded boots, and
    how many boots it comes from: boots of earlier A/B runs and `bootlab record` sessions,
    newest first, grouped by port, A/B run and variant (else label and settings) so that a
    setting's effect, or one board being slower, is no spread (`sequential.pooled_sd`).
    None: fewer than two like boots."""
    ports = [port] if isinstance(port, str) else list(port)
    groups: dict[str, list[float]] = {}
    milestone = goal_milestone(goal)
    boots = 0
    for path in reversed(list(iter_sessions(folder))[-SPREAD_FILES:]):
        if boots >= SPREAD_BOOTS:
            break
        meta = _header(path)
        if meta.get("port") not in ports or meta.get("role") == "setup":
            continue
        ab = meta.get("ab")
        key = json.dumps([meta.get("port"), *([ab.get("name"), ab.get("variant")]
                                              if isinstance(ab, dict) else
                                              [meta.get("label"), meta.get("settings")])],
                         default=str)
        try:
            analysis = analyze_source(open_source(path), profile)
        except SourceError:
            continue
        for boot in analysis.boots[:1]:
            at = next((row.elapsed_s for row in phase_rows(boot, reference)
                       if row.milestone.id == milestone and row.elapsed_s is not None), None)
            if at is not None:
                groups.setdefault(key, []).append(at)
                boots += 1
    return sequential.pooled_sd(list(groups.values())), boots


def power_lines(spread: tuple[float | None, int], design: sequential.Design,
                effect_s: float) -> list[str]:
    """The power table before an `--until-decided` run, or why there is none."""
    sd, boots = spread
    if sd is None or sd <= 0.0:
        return [f"power: no spread known yet ({boots} recorded boots of this port reach the "
                "goal; two alike are needed): boots are added until the answer is known"]
    return [f"power, from {boots} recorded boots of this port (goal spread sd "
            f"{sd * 1000:.0f} ms; 80% power):",
            *(f"  {row.text()}" for row in sequential.power_table(sd, design, effect_s))]
