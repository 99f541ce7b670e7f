"""The sessions folder at a glance: each recorded boot's label, date, board, total and key
milestones; and sessions read for a comparison.

`bootlab sessions` prints these summaries and the app's sessions screen lists them; both get
them here, so the two always agree. The app's compare screen reads its sessions here too and
builds its columns with `analysis.compare`, as `bootlab compare` does.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bootlab.core.analysis.compare import Column, Entry, build_columns, probe_figures
from bootlab.core.analysis.goals import Goal, stored_goal
from bootlab.core.analysis.loading import Profiles, load
from bootlab.core.analysis.phases import Boot, PhaseRow, phase_rows
from bootlab.core.analysis.profiles import ProfileError
from bootlab.core.capture.session import SessionError, iter_sessions
from bootlab.core.capture.sources import SourceError
from bootlab.core.files import config

KEY_MILESTONES = ("starting_kernel", "init", "login")
"""The milestones a listing shows beside the total."""


@dataclass(frozen=True)
class SessionSummary:
    """One session file, summarised (or why it could not be)."""

    path: Path
    label: str = ""
    board: str = ""
    started_iso: str | None = None
    started_s: float | None = None
    """Wall-clock time of the session's start (epoch seconds)."""
    total_s: float | None = None
    """Time to the goal stored with it (login when none is), else to the last milestone of
    the first boot."""
    milestones: dict[str, float | None] = field(default_factory=dict)
    """Milestone id -> elapsed seconds in the first boot, in boot order."""
    settings: str = ""
    """The settings recorded with it, in a few words (`bootdelay=0, cmdline: ... quiet`)."""
    place: str = ""
    """The labgrid place its bytes came from ('' for a port of this host)."""
    source: str = ""
    """Where exactly, in a few words (`source_text`)."""
    notices: tuple[str, ...] = ()
    incomplete: str | None = None
    """Why its boot has no total (bytes lost in a gap: `analysis.gaps`); None: whole."""
    error: str | None = None
    """Set when the file could not be read or analysed; then nothing else is."""

    def to_json(self) -> dict[str, Any]:
        """The summary as `bootlab sessions --json` prints it."""
        if self.error is not None:
            return {"path": str(self.path), "error": self.error}
        return {"path": str(self.path), "started": self.started_iso, "label": self.label,
                "board": self.board, "place": self.place, "source": self.source,
                "total_s": self.total_s, "milestones": self.milestones,
                "incomplete": self.incomplete, "notices": list(self.notices)}

    def matches(self, words: Iterable[str]) -> bool:
        """Every word (case-insensitive) appears in the label, board, place, date or file
        name."""
        haystack = " ".join((self.label, self.board, self.place, self.started_iso or "",
                             self.path.name)).casefold()
        return all(word.casefold() in haystack for word in words)


def summarize(path: Path, profile_dirs: Sequence[Path] = (),
              profiles: Profiles | None = None) -> SessionSummary:
    """Read, analyse and summarise one session file with the profile it was recorded with
    (`loading.load`: else linux, with a notice) and its stored pattern goal.

    Args:
        path: the session file.
        profile_dirs: where the user's profiles are searched.
        profiles: profiles already loaded, by name (filled in as they are loaded).
    """
    try:
        session = load(path, "session", None, profile_dirs, profiles)
    except (SourceError, ProfileError, SessionError) as error:
        return SessionSummary(path, error=str(error))
    meta = session.source.meta
    goal = stored_goal(meta) or Goal()
    milestones: dict[str, float | None] = {}
    last: float | None = None
    total: PhaseRow | None = None
    incomplete = None
    for boot in session.analysis.boots[:1]:
        incomplete = boot.incomplete
        rows = phase_rows(boot, session.profile.reference)
        for row in rows:
            milestones.setdefault(row.milestone.id, row.elapsed_s)
            if row.elapsed_s is not None:
                last = row.elapsed_s
        total = goal.pick(rows, lambda r: r.milestone.id)
    started = meta.get("started")
    iso = meta.get("started_iso")
    return SessionSummary(
        path, label=str(meta.get("label") or ""), board=str(meta.get("board") or ""),
        started_iso=iso if isinstance(iso, str) else None,
        started_s=float(started) if isinstance(started, int | float) else None,
        total_s=None if incomplete else last if total is None else total.elapsed_s,
        milestones=milestones, incomplete=incomplete,
        settings=settings_text(meta.get("settings")), place=str(meta.get("place") or ""),
        source=source_text(meta.get("source")), notices=tuple(session.analysis.notices))


def settings_text(settings: object) -> str:
    """A session header's `settings` in a few words: bootloader variables, then the kernel
    command line."""
    if not isinstance(settings, dict):
        return ""
    parts = []
    bootloader = settings.get("bootloader")
    if isinstance(bootloader, dict):
        parts += [f"{name}={value}" for name, value in bootloader.items()]
    cmdline = settings.get("cmdline")
    if isinstance(cmdline, str) and cmdline:
        parts.append(f"cmdline: {cmdline}")
    return ", ".join(parts)


def source_text(source: object) -> str:
    """A session header's `source` (a labgrid place's console) in a few words: `place
    rack-3: RFC 2217 from ser2net on 10.0.0.5 (/dev/ttyUSB0), exporter exp-1`."""
    if not isinstance(source, dict):
        return ""
    how = "RFC 2217" if source.get("protocol", "rfc2217") == "rfc2217" else "raw TCP"
    host = source.get("host") or "?"
    served = f"ser2net on {host}" if source.get("ser2net") else host
    device = f" ({source['device']})" if source.get("device") else ""
    return (f"place {source.get('place') or '?'}: {how} from {served}{device}, exporter "
            f"{source.get('exporter') or '?'}")


def summarize_all(paths: Iterable[Path], profile_dirs: Sequence[Path] = ()) -> \
        Iterator[SessionSummary]:
    """Summaries of several files, loading each profile once."""
    profiles: Profiles = {}
    for path in paths:
        yield summarize(path, profile_dirs, profiles)


Stamp = tuple[int, int]
"""A file's (modification time in ns, size): the file changed when this did."""


def summarize_folder(folder: Path, known: Mapping[Path, tuple[Stamp, SessionSummary]],
                     recording: Collection[Path] = ()) -> Iterator[tuple[SessionSummary, Stamp]]:
    """The sessions of a folder, newest file name first, each with the stamp it was read at;
    a file whose stamp is in `known` unchanged is not read again, nor is one being
    `recording` that is known at all.

    A file being recorded changes all the time, and on a fast console it grows by megabytes
    a second: analysing all of it at every opening of the sessions screen kept a worker busy
    for seconds, which took the interpreter from the app (every screen opened and closed 2-3
    times slower under a 50,000 lines/s flood). Its live screen shows the boot as it goes.
    """
    dirs = config.profile_dirs(folder)
    profiles: Profiles = {}
    for path in reversed(list(iter_sessions(folder))):
        try:
            info = path.stat()
        except OSError:
            continue  # deleted since it was listed
        stamp = (info.st_mtime_ns, info.st_size)
        before = known.get(path)
        if before and (before[0] == stamp or path in recording):
            yield before[1], before[0]  # the stamp it was read at: read again once recorded
        else:
            yield summarize(path, dirs, profiles), stamp


@dataclass(frozen=True)
class Run:
    """One boot of a session file, ready to be put in a comparison's column."""

    name: str
    label: str
    boot: Boot
    figures: dict[str, float]
    """Its post-boot probe figures (the first boot of a session only)."""


@dataclass(frozen=True)
class Comparison:
    """Sessions read for a comparison: their boots, the milestone order, what went wrong."""

    runs: list[Run]
    order: dict[str, int]
    """Milestone id -> position in the sessions' profiles."""
    reference: str
    """The profiles' own reference point."""
    problems: list[str]
    """One line per session that could not be read, and per boot left out (a gap in its
    recording: `analysis.gaps`)."""

    def columns(self, reference: str | None = None, group: bool = True) -> list[Column]:
        """The boots as `bootlab compare` puts them side by side, times from `reference`
        (default: the profiles' own), grouped by label or not."""
        return build_columns([Entry(r.name, r.label, r.boot, reference or self.reference,
                                    r.figures) for r in self.runs], group=group)


def read_runs(paths: Iterable[Path], profile_dirs: Sequence[Path] = ()) -> Comparison:
    """Read and analyse sessions for a comparison (each with its recorded profile); the ones
    that cannot be read are named in `problems` and left out."""
    runs: list[Run] = []
    order: dict[str, int] = {}
    problems: list[str] = []
    profiles: Profiles = {}
    reference = "first-byte"
    for path in paths:
        try:
            session = load(path, "session", None, profile_dirs, profiles)
        except (SourceError, ProfileError, SessionError) as error:
            problems.append(str(error))
            continue
        order = {**session.profile.order, **order}
        reference = session.profile.reference
        label = str(session.source.meta.get("label") or "")
        figures = probe_figures(session.source.meta)
        runs += [Run(path.name, label, boot, figures if boot.index == 1 else {})
                 for boot in session.analysis.boots]
    problems += [f"{run.name}#{run.boot.index}: {run.boot.incomplete}; left out"
                 for run in runs if run.boot.incomplete]
    return Comparison(runs, order, reference, problems)
