"""Loading a recorded boot for analysis: one way for every command, the app and the A/B report.

`load` opens a session or a log (`capture.sources.open_source`), picks its profile (the one
asked for; else the one a session was recorded with; else linux, saying so when the recorded
one is not available here) and analyses it with `analyze_source`: the session's own pattern
goal is milestone `goal` (`goals.session_profile`), lines are numbered as in the file (a
grabserial log's own lines counted), and the source's notices join the analysis's. A
session's gaps and time zero (`gaps`, `timezero`) are set on its boots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bootlab.core.analysis import timezero
from bootlab.core.analysis.bootstage import add_bootstage
from bootlab.core.analysis.collected import add_collected
from bootlab.core.analysis.gaps import mark as mark_gaps
from bootlab.core.analysis.gaps import session_gaps
from bootlab.core.analysis.goals import session_profile
from bootlab.core.analysis.journal_goal import add_journal_goal
from bootlab.core.analysis.pipeline import Analysis, analyze_blocks
from bootlab.core.analysis.profiles import Profile, ProfileError, load_profile
from bootlab.core.analysis.ready import add_ready
from bootlab.core.analysis.systemd_units import add_systemd
from bootlab.core.analysis.units import add_units
from bootlab.core.capture.sources import Source, open_source
from bootlab.core.files.config import profile_dirs

DEFAULT_PROFILE = "linux"
"""The profile used when none is asked for and none was recorded."""

Profiles = dict[str, Profile]
"""Profiles already loaded, by the name they were asked by (filled in as they are loaded)."""


def resolve_profile(name: str | None, sessions: Path | None = None) -> Profile:
    """A profile by name or path (default linux), the user's folders beside `sessions`
    (default ./sessions) and in the config folder searched first.

    Raises:
        ProfileError: not found, or invalid.
    """
    return load_profile(name or DEFAULT_PROFILE, profile_dirs(sessions))


def _cached(name: str, dirs: Sequence[Path], cache: Profiles) -> Profile:
    if name not in cache:
        cache[name] = load_profile(name, dirs)
    return cache[name]


def recorded_profile(source: Source, dirs: Sequence[Path] = (),
                     cache: Profiles | None = None) -> Profile:
    """The profile a session was recorded with, else linux; when the recorded one cannot be
    loaded here, linux, with a notice in `source.notices`.

    Raises:
        ProfileError: linux itself cannot be loaded (a broken user file of that name).
    """
    cache = {} if cache is None else cache
    recorded = source.meta.get("profile")
    if isinstance(recorded, str) and recorded:
        try:
            return _cached(recorded, dirs, cache)
        except ProfileError:
            source.notices.append(f"profile {recorded!r} it was recorded with is not available "
                                  f"here; using {DEFAULT_PROFILE!r}")
    return _cached(DEFAULT_PROFILE, dirs, cache)


def analyze_source(source: Source, profile: Profile, stored_goal: bool = True) -> Analysis:
    """The boots and milestones of a source, its lines numbered as in the file, its notices
    in the analysis's.

    Args:
        source: the opened log or session.
        profile: the profile to analyse it with.
        stored_goal: a session's own pattern goal becomes milestone `goal` (in place of any
            the profile has). False keeps the profile's: a baseline is compared with the boot
            on screen at the goal that boot is measured to.
    """
    if stored_goal:
        profile = session_profile(profile, source.meta)
    analysis = analyze_blocks(source.blocks(), profile, source.line_time, source.line_number)
    analysis.notices += source.notices
    add_units(analysis, source)
    if source.kind != "session":
        timezero.mark(analysis.boots, timezero.NO_LOG_ZERO)
    else:
        gaps = session_gaps(source.meta, source.session.events
                            if source.session is not None else ())
        mark_gaps(analysis.boots, gaps)
        timezero.mark(analysis.boots, timezero.session_zero(source.meta, source.session), gaps)
        add_collected(analysis, source)
        add_bootstage(analysis, source)
        add_systemd(analysis, source)
        add_ready(analysis, source)
        add_journal_goal(analysis, source)
        stale = source.session.before if source.session is not None else []
        if stale:
            analysis.notices.append(
                f"{sum(len(data) for _, data in stale)} bytes arrived before this boot's start "
                "(the previous boot's output, delivered late after the power-on, reset or boot "
                "command): recorded apart, not part of this boot")
    return analysis


@dataclass
class Loaded:
    """A boot log read and analysed."""

    source: Source
    analysis: Analysis

    @property
    def profile(self) -> Profile:
        """The profile it was analysed with (a session's pattern goal included)."""
        return self.analysis.profile


def load(path: Path, kind: str | None = None, asked: str | None = None,
         dirs: Sequence[Path] = (), cache: Profiles | None = None) -> Loaded:
    """Open and analyse a session or log.

    Args:
        path: the file.
        kind: one of `capture.sources.KINDS`; None: the kind its content shows.
        asked: the profile asked for (a name or a .toml path); None: the recorded one, else
            linux.
        dirs: the user's profile folders, nearest first (`files.config.profile_dirs`).
        cache: profiles already loaded, shared by the calls of one listing.

    Raises:
        SourceError: the file cannot be read as a boot log of that kind.
        ProfileError: the profile asked for cannot be loaded.
    """
    cache = {} if cache is None else cache
    source = open_source(path, kind)
    profile = _cached(asked, dirs, cache) if asked else recorded_profile(source, dirs, cache)
    return Loaded(source, analyze_source(source, profile))
