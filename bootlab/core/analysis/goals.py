"""The boot's goal: what a boot is measured to, one concept for every command and the app.

A goal is a milestone id of the profile in force (`login`, `init`, a user's own milestone),
a systemd unit (`unit:multi-user.target`: its status line showing it active, `units`), a
regular expression a line must match (an application's "display on", a shell prompt), or a
shell command that succeeds once the application is ready (`ready:systemctl is-active app`,
run after login until it does: `ready`).
A pattern goal becomes a real milestone, `goal`, of the profile used for that run
(`with_goal`), so the phase table, analysis, comparisons, the engine's waits and the A/B
figures all see it alike. The goal is stored in the session header (`goal_meta`) and read back
(`stored_goal`) when the session is analysed again, so its `goal` milestone shows there too.
A session stored without a goal (written before goals existed) is measured to `login`.

Several goals are "the first of them" by default; with `every` ("display in 5 s and sound in
3 s") the boot is followed until each is reached, and is done at the last of them. Goals asked
after login (`ready:`, `journal:`) go alone, or several of them together with `every`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from bootlab.core.analysis.phases import Milestone
from bootlab.core.analysis.profiles import Marker, Profile
from bootlab.core.analysis.ready import (
    JOURNAL_PREFIX,
    READY_PREFIX,
    journal_pattern,
    ready_command,
)
from bootlab.core.analysis.regex_parse import user_pattern
from bootlab.core.analysis.units import UNIT_NAME, UNIT_PREFIX, unit_marker

GOAL_ID = "goal"
"""The milestone a pattern goal becomes."""
DEFAULT_MILESTONE = "login"
"""What a boot is measured to when nothing else is said."""
META_KEY = "goal"
"""The session header's key holding the goal."""


T = TypeVar("T")


class GoalError(ValueError):
    """A goal that cannot be used; the message says why (and the ids there are)."""


@dataclass(frozen=True)
class Goal:
    """What a boot is measured to: the first of these milestones reached (with `every`,
    each of them, and it is done at the last)."""

    until: tuple[str, ...] = (DEFAULT_MILESTONE,)
    """Milestone ids (`goal` among them when there is a pattern)."""
    pattern: str | None = None
    """A line pattern: it is milestone `goal`."""
    every: bool = False
    """Each milestone must be reached, not only the first of them."""

    @property
    def text(self) -> str:
        """As the status line shows it: `login`, `/display on/`, `init or login`,
        `display and sound`."""
        return self._words("/{}/")

    @property
    def name(self) -> str:
        """As messages say it: `login`, `goal 'display on'`."""
        return self._words("goal '{}'")

    def _words(self, pattern_form: str) -> str:
        return (" and " if self.every else " or ").join(pattern_form.format(self.pattern)
                           if ident == GOAL_ID and self.pattern is not None else ident
                           for ident in self.until)

    @property
    def readies(self) -> tuple[str, ...]:
        """The commands of its `ready:` goals."""
        return tuple(c for c in map(ready_command, self.until) if c is not None)

    @property
    def journals(self) -> tuple[str, ...]:
        """The patterns of its `journal:` goals."""
        return tuple(p for p in map(journal_pattern, self.until) if p is not None)

    @property
    def ready(self) -> str | None:
        """The command of its (first) `ready:` goal (None: none)."""
        return next(iter(self.readies), None)

    @property
    def journal(self) -> str | None:
        """The pattern of its (first) `journal:` goal (None: none)."""
        return next(iter(self.journals), None)

    @property
    def after_login(self) -> bool:
        """The goal is asked at the board's shell after its login prompt, not seen on its
        console."""
        return self.ready is not None or self.journal is not None

    def reached(self, milestones: Iterable[Milestone]) -> Milestone | None:
        """The milestone at which the goal is reached (`milestones` in the order they came):
        the first that is a goal, or with `every`, the one completing the set within one boot
        (a reset half-way starts the set again); None before."""
        if not self.every:
            return self.pick(milestones, lambda m: m.id)
        boots: dict[int, list[Milestone]] = {}
        for milestone in milestones:
            boots.setdefault(milestone.boot, []).append(milestone)
        return next((found for found in (self.pick(ms, lambda m: m.id) for ms in
                                         boots.values()) if found is not None), None)

    def missed(self, milestones: Sequence[Milestone], timeout_s: float) -> str:
        """Why a boot with these milestones did not reach the goal in `timeout_s` seconds, in
        words; with `every`, which of its goals the last boot did not show."""
        said = f"not reached within {timeout_s:.0f} s"
        if not self.every:
            return said
        last = milestones[-1].boot if milestones else None
        seen = {m.id for m in milestones if m.boot == last}
        left = [ident for ident in self.until if ident not in seen]
        return f"{said} ({' and '.join(Goal((i,), self.pattern).name for i in left)} not seen)"

    def pick(self, items: Iterable[T], ident: Callable[[T], str | None]) -> T | None:
        """As `reached`, for anything naming a milestone (a phase row: `ident` its id, None
        where it was not reached)."""
        missing = set(self.until)
        for item in items:
            found = ident(item)
            if found in missing:
                missing.discard(found)
                if not self.every or not missing:
                    return item
        return None


def parse_goal(until: Sequence[str], pattern: str | None, profile: Profile,
               every: bool = False) -> Goal:
    """The goal given by milestone ids and/or a pattern; neither: `login`. With `every`,
    each of them must be reached.

    Raises:
        GoalError: an id names no milestone of the profile (the message lists them), the
            pattern is invalid or could backtrack for minutes (`user_pattern`), or `every`
            is asked of fewer than two goals.
    """
    if pattern is not None:
        _check_pattern(pattern, "goal pattern", "the goal's pattern is empty: give a regular "
                       "expression a line must match, such as 'display on'")
    known = [*profile.by_id, *([GOAL_ID] if pattern is not None and GOAL_ID not in
                               profile.by_id else [])]
    _check_ready(until, pattern, profile, every)
    for ident in until:
        if ident.startswith(UNIT_PREFIX):
            try:
                unit_marker(ident.removeprefix(UNIT_PREFIX))
            except ValueError as error:
                raise GoalError(f"bad goal {ident!r}: {error}") from None
    unknown = [ident for ident in until if ident not in known
               and not ident.startswith((UNIT_PREFIX, READY_PREFIX, JOURNAL_PREFIX))]
    if unknown:
        raise GoalError(f"no milestone {', '.join(map(repr, unknown))} in profile "
                        f"{profile.name}; its milestones: {', '.join(known)} (or a systemd "
                        "unit, unit:NAME, a shell command, ready:COMMAND, a journal message, "
                        "journal:REGEX, or a pattern a line must match)")
    ids = tuple(dict.fromkeys([*until, *([GOAL_ID] if pattern is not None else [])]))
    if every and len(ids) < 2:
        raise GoalError("--all asks for each of several goals: give two or more (--until "
                        "MILESTONE repeated, or with --pattern)")
    return Goal(ids or (DEFAULT_MILESTONE,), pattern, every)


def several_to_judge(goal: Goal, run: str) -> str | None:
    """Why `run` (an A/B run, a tune: each judges one goal's time by its interval) cannot use
    `goal`; None when it can. Several goals are not one time to judge (which of them came
    first, or last, differs from boot to boot), so they are refused rather than judged on
    one of them under the name of all."""
    if len(goal.until) < 2:
        return None
    asked = f"--all asks for each of {goal.text}" if goal.every else \
        f"{goal.text} is the first of several"
    return (f"{run} judges one goal's time, and {asked}: give the one to judge as --until "
            "(every milestone and unit is compared in its table, with its interval), and "
            "check each one's budget with `bootlab check`")


def _check_pattern(pattern: str, what: str, empty: str) -> None:
    """A user's pattern that can be used: not empty (else `empty` is the message), valid, and
    not one that could backtrack for minutes (`user_pattern`).

    Raises:
        GoalError: it cannot.
    """
    if not pattern:
        raise GoalError(empty)
    try:
        user_pattern(pattern)
    except re.error as error:
        raise GoalError(f"bad {what} {pattern!r}: {error}") from None


def _check_ready(until: Sequence[str], pattern: str | None, profile: Profile,
                 every: bool = False) -> None:
    """A `ready:COMMAND` or `journal:REGEX` goal is asked after login, so no console milestone
    can race it: it is the only goal, or one of several goals all asked there and each to be
    reached (`every`: they are asked together, each timed). Each names its command or a valid
    pattern, and the profile has a login prompt.

    Raises:
        GoalError: it does not.
    """
    commands = [c for c in map(ready_command, until) if c is not None]
    patterns = [p for p in map(journal_pattern, until) if p is not None]
    if not commands and not patterns:
        return
    kind = "ready:" if commands else "journal:"
    if not all(commands):
        raise GoalError("a ready: goal needs the command that succeeds once the board is "
                        "ready, such as ready:systemctl is-active myapp")
    for found in patterns:
        _check_pattern(found.strip() and found, "journal: goal pattern", "a journal: goal "
                       "needs the pattern a message of the boot's journal matches, such as "
                       "journal:Started myapp")
    if len(commands) + len(patterns) < len(until) or pattern is not None:
        raise GoalError(f"a {kind} goal is asked at the shell after login: give it alone, or "
                        "with other goals asked there (ready:, journal:) and --all; not with "
                        "goals seen on the console")
    if len(until) > 1 and not every:
        raise GoalError("goals asked at the shell after login are asked together, each "
                        "timed: give --all (each of them), not the first of them")
    if DEFAULT_MILESTONE not in profile.by_id:
        raise GoalError(f"a {kind} goal is asked at the shell after login, and profile "
                        f"{profile.name} has no {DEFAULT_MILESTONE} milestone")


def goal_marker(pattern: str) -> Marker:
    """The milestone a pattern goal is: first line matching it, prompts matched while they
    arrive (a shell prompt ends without a newline).

    Raises:
        re.error: a bad or too costly pattern.
    """
    return Marker(GOAL_ID, f"/{pattern}/", "userspace", (user_pattern(pattern),),
                  partial=True)


def with_goal(profile: Profile, goal: Goal | None) -> Profile:
    """The profile with a pattern goal's milestone (in place of any milestone `goal` it had)
    and a milestone for each systemd unit the goal names (`unit:NAME`); the profile itself
    for any other goal."""
    if goal is None:
        return profile
    added = [unit_marker(ident.removeprefix(UNIT_PREFIX)) for ident in goal.until
             if ident.startswith(UNIT_PREFIX) and ident not in profile.by_id]
    if goal.pattern is not None:
        added.append(goal_marker(goal.pattern))
    if not added:
        return profile
    ids = {m.id for m in added}
    markers = (*(m for m in profile.markers if m.id not in ids), *added)
    return replace(profile, markers=markers)


def goal_meta(goal: Goal) -> dict[str, Any]:
    """The goal as the session header stores it."""
    return {"until": list(goal.until), **({"pattern": goal.pattern} if goal.pattern else {}),
            **({"all": True} if goal.every else {})}


def stored_goal(meta: Mapping[str, Any]) -> Goal | None:
    """The goal a session header holds; None when it holds none (older sessions) or one that
    cannot be used (its pattern is checked as any user pattern: the file is data)."""
    raw = meta.get(META_KEY)
    if not isinstance(raw, dict):
        return None
    until, pattern = raw.get("until"), raw.get("pattern")
    if not isinstance(until, list) or not until or not all(isinstance(i, str) for i in until):
        return None
    if any(i.startswith(UNIT_PREFIX) and not UNIT_NAME.fullmatch(i.removeprefix(UNIT_PREFIX))
           for i in until) or any(ready_command(i) == "" or journal_pattern(i) == ""
                                    for i in until):
        return None
    if pattern is not None:
        if not isinstance(pattern, str) or GOAL_ID not in until:
            return None
        try:
            user_pattern(pattern)
        except re.error:
            return None
    every = raw.get("all") is True
    return Goal(tuple(until), pattern, every and len(until) > 1)


def session_profile(profile: Profile, meta: Mapping[str, Any]) -> Profile:
    """The profile a recorded session is analysed with: `profile` plus the session's own
    pattern goal, so its `goal` milestone shows as it did when it was recorded."""
    return with_goal(profile, stored_goal(meta))
