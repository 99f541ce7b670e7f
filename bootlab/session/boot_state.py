"""What the main screen knows of the boots received: reference points, phase rows, the clock,
and what the phase pane compares them with (a baseline session, budgets, the user's marks).

Plain state kept by the screen's handlers (no widgets): each batch's boot snapshot and newest
lines update it, and the panes read from it. A boot's dmesg collected after its goal joins its
rows as the analysis joined it (`events.Collected`), placed where the stream shows that boot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bootlab.core.analysis.budgets import (
    DEFAULT_FILE,
    BudgetError,
    BudgetFile,
    evaluate,
    load_budgets,
    validate,
)
from bootlab.core.analysis.goals import Goal, with_goal
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.phases import (
    Milestone,
    ParsedLine,
    PhaseRow,
    phase_rows,
    silent_start,
)
from bootlab.core.analysis.pipeline import parse_line
from bootlab.core.analysis.profiles import STAGES, Marker, Profile
from bootlab.core.analysis.units import is_status, maybe_status, read_units
from bootlab.core.analysis.usermarks import UserMark, add_user_milestone
from bootlab.core.capture.lines import Line
from bootlab.core.capture.sources import SourceError, open_source
from bootlab.core.files.config import config_dir, profile_dirs
from bootlab.core.files.state import load_state, save_state
from bootlab.core.render.bootloader_stages import stage_summary
from bootlab.core.render.userspace import host_spans
from bootlab.session.batcher import Source
from bootlab.session.events import BaselineLoaded, BootSnapshot, Collected
from bootlab.session.live import LiveLink
from bootlab.session.phase_marks import BudgetMark, BudgetState, PhaseMarks
from bootlab.session.replay import Player


def sessions_folder(source: Source) -> Path | None:
    """The folder whose baseline applies: where the live session is written or the replayed
    one lies."""
    if isinstance(source, LiveLink):
        return source.folder
    if isinstance(source, Player):
        return source.path.parent
    return None


def session_file(source: Source, recording: str | None) -> Path | None:
    """The session file of the boot shown (the replayed file, or the one being written)."""
    if isinstance(source, Player):
        return source.path
    if isinstance(source, LiveLink) and recording:
        return source.folder / recording
    return None


def saved_baseline(source: Source) -> Path | None:
    """The baseline session remembered for the source's folder."""
    folder = sessions_folder(source)
    return None if folder is None else load_state().baseline(folder)


def remember_baseline(source: Source, session: Path | None) -> None:
    """Remember (None: forget) the baseline of the source's folder.

    Raises:
        OSError: the state file cannot be written.
    """
    folder = sessions_folder(source)
    if folder is not None:
        state = load_state()
        state.set_baseline(folder, session)
        save_state(state)


def load_baseline(session: Path | None, profile: Profile) -> BaselineLoaded:
    """Analyse a baseline session (on a worker: it reads and analyses a whole file)."""
    if session is None:
        return BaselineLoaded(None, {})
    try:
        source = open_source(session)
    except SourceError as error:
        return BaselineLoaded(None, {}, f"baseline: {error}")
    analysis = analyze_source(source, profile, stored_goal=False)
    times: dict[str, float] = {}
    for row in phase_rows(analysis.boots[0], profile.reference) if analysis.boots else []:
        if row.elapsed_s is not None:
            times.setdefault(row.milestone.id, row.elapsed_s)
    if not times:
        return BaselineLoaded(None, {}, f"baseline: {session.name} has no milestones")
    return BaselineLoaded(session, times)


def load_budget_file(profile: Profile) -> tuple[BudgetFile | None, str | None]:
    """The budgets in `<config dir>/budgets.toml` (none when it does not exist), and what
    is wrong with the file (file:line: reason) when it cannot be used."""
    path = config_dir() / DEFAULT_FILE
    if not path.is_file():
        return None, None
    try:
        budgets = load_budgets(path)
        validate(budgets, profile.by_id)
    except BudgetError as error:
        return None, f"{error}; no budgets shown"
    return budgets, None


@dataclass(frozen=True)
class JoinedDmesg:
    """A boot's collected dmesg as the stream shows it: the milestones from dmesg, their host
    times moved onto the stream's clock, and the boot's note."""

    boot: int
    """The stream's index of the boot."""
    milestones: tuple[Milestone, ...]
    note: str
    units: tuple[tuple[str, float, float], ...] = ()
    """User space as the pane folds it (`userspace.host_spans`), on the stream's clock."""


def _by_time(milestone: Milestone) -> float:
    return float("inf") if milestone.host_s is None else milestone.host_s


class BootState:
    """Boots, their reference times and phase rows, the newest line's time, and what the
    rows are compared with."""

    def __init__(self, profile: Profile, goal: Goal | None = None) -> None:
        """Args:
            profile: the milestone markers in force (marked lines are added to it), without
                a pattern goal's.
            goal: what the boot is measured to (None: not known, as in a replay of a session
                stored without one).
        """
        self.own_profile = profile
        """The profile without the goal's milestone: the ids a goal can be chosen from."""
        self.goal = goal
        self.profile = with_goal(profile, goal)
        """The profile in force: the user's marks and a pattern goal's milestone included."""
        self.reference = profile.reference
        """The profile's reference point: "first-byte" or a milestone id."""
        self.boot: BootSnapshot | None = None
        """The boot being received."""
        self.rows: list[PhaseRow] = []
        """Its phase table."""
        self.references: dict[int, tuple[int, float]] = {}
        """Boot index -> (its first line number, its reference time in s)."""
        self.newest_line_s: float | None = None
        self.baseline: BaselineLoaded | None = None
        """The baseline's milestone times, once loaded."""
        self.budgets: BudgetFile | None = None
        self._milestones_seen: tuple[int, int] | None = None
        self._user_markers: list[Marker] = []
        """Milestones the user marked during this run (the source's capture lacks them)."""
        self._user_hits: list[Milestone] = []
        """Lines those markers matched, oldest first (boot index set when shown)."""
        self._sessions: dict[str, int] = {}
        """Session file name -> the last boot received in it (its index in the stream)."""
        self._dmesg: JoinedDmesg | None = None
        """The collected dmesg of a boot received, joined."""
        self._status: list[ParsedLine] = []
        """The status lines (systemd's) received, parsed: user space as it comes."""
        self._units_seen: tuple[tuple[int, int, int] | None, list[tuple[str, float, float]]] \
            = (None, [])

    def restart(self) -> None:
        """Forget the boots received (a replay seeking back plays them again); what they are
        compared with and the user's markers stay."""
        self.boot = None
        self.rows = []
        self.references = {}
        self.newest_line_s = None
        self._milestones_seen = None
        self._user_hits = []
        self._sessions = {}
        self._dmesg = None
        self._status = []
        self._units_seen = (None, [])

    def update(self, boot: BootSnapshot, session: str | None = None) -> bool:
        """Take the current boot (received in the session file named `session`, when known);
        True when its milestones changed since the last call."""
        self.boot = boot
        if session is not None:
            self._sessions[session] = boot.index
        zero = self._reference_s(boot)
        if zero is not None:
            self.references[boot.index] = (boot.first_line, zero)
        if self._user_hits:
            self._user_hits = [hit for hit in self._user_hits if hit.line >= boot.first_line]
        self.rows = phase_rows(self._shown(boot).boot(), self.reference)
        if self._status and self._status[0].number < boot.first_line:  # an earlier boot's
            self._status = [line for line in self._status if line.number >= boot.first_line]
        seen = (boot.index, len(self.rows))
        changed = seen != self._milestones_seen
        self._milestones_seen = seen
        return changed

    def collect(self, event: Collected) -> bool:
        """Join a boot's collected dmesg to its rows, when that boot is the one shown (its
        session's last boot received); True when it is."""
        boot = self.boot
        if boot is None or self._sessions.get(event.session) != boot.index:
            return False
        joined = event.boot
        # The file's boot and the stream's are the same bytes: they start at the same moment.
        shift = 0.0 if boot.start_host_s is None or joined.start_host_s is None \
            else boot.start_host_s - joined.start_host_s
        placed = tuple(replace(m, boot=boot.index, host_s=None if m.host_s is None
                               else m.host_s + shift)
                       for m in joined.milestones if m.source != "console")
        record = joined.systemd
        said = None if record is None else \
            f"systemd's record, read after login: {len(record.units)} units ({record.note})"
        notes = [note for note in (joined.collected, stage_summary(joined), said, joined.ready)
                 if note]
        spans = tuple((name, began + shift, ready + shift)
                      for name, began, ready in host_spans(joined))
        self._dmesg = JoinedDmesg(boot.index, placed, "\n".join(notes), spans)
        self.update(boot)
        return True

    @property
    def unit_rows(self) -> list[tuple[str, float | None, float | None]]:
        """The shown boot's user space as the pane folds it: (unit, began, ready) in seconds
        from the boot's reference point: what was collected after it (systemd's record), else
        its status lines so far (empty: none)."""
        dmesg, boot = self._dmesg, self.boot
        if boot is None:
            return []
        if dmesg is not None and dmesg.boot == boot.index and dmesg.units:
            spans: Sequence[tuple[str, float, float]] = dmesg.units
        else:
            spans = self._live_units(boot)
        return [(name, self.since_reference(began), self.since_reference(ready))
                for name, began, ready in spans]

    def _live_units(self, boot: BootSnapshot) -> list[tuple[str, float, float]]:
        """The units the boot's status lines showed so far, as the pane draws them (cached
        until another status line arrives)."""
        key = (boot.index, boot.first_line, len(self._status))
        if self._units_seen[0] != key:
            lines = [line for line in self._status if line.number >= boot.first_line]
            self._units_seen = (key, host_spans(replace(boot.boot(), units=read_units(lines)))
                                if lines else [])
        return self._units_seen[1]

    @property
    def collected_note(self) -> str | None:
        """What the shown boot's collected dmesg added, or why nothing (None: none was)."""
        dmesg = self._dmesg
        return dmesg.note if dmesg and self.boot and dmesg.boot == self.boot.index else None

    def saw(self, lines: Sequence[Line], partial: Line | None) -> None:
        """Note the newest line received (and the user's milestones among the lines)."""
        newest = partial or (lines[-1] if lines else None)
        if newest is not None and newest.t_ns is not None:
            self.newest_line_s = newest.t_ns / 1e9
        for line in lines:
            if line.t_ns is not None and maybe_status(line.raw):
                parsed = parse_line(line.number, line.raw, line.host_s, line.offset)
                if is_status(parsed.message):
                    self._status.append(parsed)
        if self._user_markers:
            self._match_user_markers(lines)

    def since_reference(self, t_s: float | None) -> float | None:
        """Seconds from the current boot's reference point to `t_s` (session time)."""
        if t_s is None or self.boot is None or self.boot.index not in self.references:
            return None
        return t_s - self.references[self.boot.index][1]

    def boot_references(self) -> list[tuple[int, float]]:
        """(first line number, reference time) of every boot, in order (for the console)."""
        return sorted(self.references.values())

    def marks(self, clock_s: float | None) -> PhaseMarks:
        """Baseline times, budget marks and the goal for the phase pane; `clock_s` (session
        time now) fails a budget whose milestone has not come in time."""
        baseline = self.baseline
        boot = self.boot.boot() if self.boot is not None else None
        silent = silent_start(boot) if boot is not None else None
        note = f"firmware before {boot.milestones[0].id} silent: not timed" \
            if silent and boot is not None else ""
        if boot is not None and boot.gap is not None:
            note = f"incomplete: port lost at {boot.gap.at_s:.1f} s ({boot.gap.why}): no total"
        return PhaseMarks(baseline.times if baseline and baseline.session else None,
                          baseline.session.stem if baseline and baseline.session else "",
                          self._budget_marks(clock_s), self.goal.until if self.goal else (),
                          self.goal is not None and self.goal.every, note)

    def goal_time(self) -> tuple[float | None, float | None]:
        """When the boot reached its goal (its goal milestone's elapsed seconds: the first, or
        with `every` the last of them), and that against the baseline's goal, found alike;
        (None, None) before it did."""
        if self.goal is None:
            return None, None
        row = self.goal.pick(self.rows,
                             lambda r: None if r.elapsed_s is None else r.milestone.id)
        if row is None or row.elapsed_s is None:
            return None, None
        times = self.baseline.times if self.baseline and self.baseline.session else {}
        base = self.goal.pick(sorted(times.items(), key=lambda item: item[1]),
                              lambda item: item[0])
        return row.elapsed_s, None if base is None else row.elapsed_s - base[1]

    def set_goal(self, goal: Goal) -> None:
        """Measure to `goal` from now on (a pattern goal's milestone joins the profile)."""
        self.goal = goal
        self.profile = with_goal(self.own_profile, goal)

    def mark(self, line: Line, boot_lines: Iterable[Line], sessions: Path | None) -> UserMark:
        """Make a line a milestone of the user's profile, shown in this boot at once.

        Args:
            line: the line marked.
            boot_lines: the lines received so far in the current boot, oldest first.
            sessions: the sessions folder (its `profiles/` is searched first).

        Raises:
            UserMarkError, ProfileError, OSError: see `add_user_milestone`.
        """
        dirs = profile_dirs(sessions)
        user_mark = add_user_milestone(self.profile, line.raw, self._stage_at(line.number),
                                       dirs[-1], dirs)
        self.own_profile = user_mark.profile
        self.profile = with_goal(user_mark.profile, self.goal)
        self._user_markers.append(user_mark.marker)
        self._match_user_markers(boot_lines, [user_mark.marker])
        if self.boot is not None:
            self.update(self.boot)
        return user_mark

    def _stage_at(self, number: int) -> str:
        """The line's stage: the latest stage the boot reached at or before line `number`.
        Stages do not go back: a kernel message after user space started (an initramfs's
        root mount) leaves the lines after it in user space."""
        reached = [STAGES.index(row.milestone.stage) for row in self.rows
                   if row.milestone.source == "console" and row.milestone.line <= number
                   and row.milestone.stage in STAGES]
        return STAGES[max(reached)] if reached else STAGES[1]

    def _match_user_markers(self, lines: Iterable[Line],
                            markers: Sequence[Marker] | None = None) -> None:
        for line in lines:
            parsed = parse_line(line.number, line.raw, line.host_s, line.offset)
            for marker in markers or self._user_markers:
                if marker.match(parsed.message) is not None:
                    self._user_hits.append(Milestone(
                        marker.id, marker.title, marker.stage, line.number, parsed.text,
                        parsed.host_s, parsed.kernel_s, parsed.boot_s, {}))

    def _with_user_hits(self, boot: BootSnapshot) -> BootSnapshot:
        """The boot with the first hit of each user milestone in it, in line order."""
        taken = {m.id for m in boot.milestones}
        added: list[Milestone] = []
        for hit in self._user_hits:
            if hit.line >= boot.first_line and hit.id not in taken:
                taken.add(hit.id)
                added.append(replace(hit, boot=boot.index))
        if not added:
            return boot
        return replace(boot, milestones=tuple(sorted((*boot.milestones, *added),
                                                     key=lambda m: m.line)))

    def _shown(self, boot: BootSnapshot) -> BootSnapshot:
        """The boot as the pane shows it: the user's milestones in it, and its collected
        dmesg's in place of any the console placed by a fallback rule, in time order."""
        boot = self._with_user_hits(boot)
        dmesg = self._dmesg
        if dmesg is None or dmesg.boot != boot.index:
            return boot
        ids = {m.id for m in dmesg.milestones}
        kept = [m for m in boot.milestones if m.id not in ids]
        return replace(boot, milestones=tuple(sorted((*kept, *dmesg.milestones), key=_by_time)))

    def _budget_marks(self, clock_s: float | None) -> dict[str, BudgetMark]:
        boot = self.boot
        if self.budgets is None or boot is None:
            return {}
        # Budgets count from the boot's first byte (as `bootlab check`); the pane's axis
        # from the reference point.
        start = boot.start_host_s
        zero = self.references[boot.index][1] if boot.index in self.references else start
        shift = zero - start if zero is not None and start is not None else 0.0
        since_start = None if clock_s is None or start is None else clock_s - start
        marks: dict[str, BudgetMark] = {}
        for verdict in evaluate(self.budgets, self._shown(boot).boot()):
            budget = verdict.budget
            if budget.probe:
                continue
            if verdict.measured is not None:
                state: BudgetState = "pass" if verdict.passed else "fail"
            else:
                late = since_start is not None and since_start > budget.limit
                state = "fail" if late else "open"
            marks[budget.target] = BudgetMark(budget.limit - shift, state)
        return marks

    def _reference_s(self, boot: BootSnapshot) -> float | None:
        if self.reference != "first-byte":
            for milestone in boot.milestones:
                if milestone.id == self.reference:
                    return milestone.host_s
        return boot.start_host_s


def marked_line(lines: Sequence[Line], match_row: int | None) -> Line | None:
    """The line a mark applies to: the search match, else the newest completed line."""
    if match_row is not None and 0 <= match_row < len(lines):
        return lines[match_row]
    return lines[-1] if lines else None
