"""Helpers shared by the commands: errors and notices on stderr, loading the inputs (the one
loader, `core.analysis.loading`), `--reference` and the goal of `--until`/`--pattern`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bootlab.core.analysis.goals import Goal, parse_goal
from bootlab.core.analysis.loading import Loaded, Profiles, load
from bootlab.core.analysis.profiles import Profile, ProfileError
from bootlab.core.capture.sources import Source
from bootlab.core.capture.text import clean
from bootlab.core.files.config import profile_dirs


def fail(message: str, code: int) -> int:
    """Print `bootlab: message` on stderr (on one line, no control character: messages may
    quote a file) and return the exit code."""
    sys.stderr.write(f"bootlab: {clean(message)}\n")
    return code


def print_notices(path: Path, notices: list[str]) -> None:
    """What was worked around in reading `path`, one `bootlab: PATH: notice` line each (a
    notice may quote a file's content: never raw to the terminal)."""
    for notice in notices:
        sys.stderr.write(f"bootlab: {clean(str(path))}: {clean(notice)}\n")


def load_input(path: Path, args: argparse.Namespace, cache: Profiles | None = None) -> Loaded:
    """Load and analyse one input with `--kind` and `--profile` (else the recorded profile),
    the profiles of `--sessions`; its notices are printed.

    Raises:
        SourceError, ProfileError: the input or the profile asked for cannot be used.
    """
    loaded = load(path, getattr(args, "kind", None), args.profile,
                  profile_dirs(getattr(args, "sessions", None)), cache)
    print_notices(path, loaded.analysis.notices)
    return loaded


def source_info(source: Source) -> dict[str, Any]:
    """What JSON outputs say of an input: its path, kind and session header fields."""
    keys = ("label", "board", "port", "baud", "profile", "goal", "settings", "started_iso",
            "bootlab")
    return {"path": str(source.path), "kind": source.kind,
            **{k: source.meta[k] for k in keys if k in source.meta}}


def check_reference(reference: str | None, profile: Profile) -> str | None:
    """The --reference value, if the profile knows it.

    Raises:
        ProfileError: it names no milestone of the profile.
    """
    if reference is not None and reference != "first-byte" and reference not in profile.by_id:
        raise ProfileError("--reference", None,
                           f"no milestone {reference!r} in profile {profile.name}")
    return reference


def goal_of(args: argparse.Namespace, profile: Profile) -> Goal:
    """The goal of `--until MILESTONE` (repeatable) and/or `--pattern REGEX`, each to be
    reached with `--all` (`boot`, `ab`, the app); login without either.

    Raises:
        GoalError: an unknown milestone id or a bad pattern.
    """
    return parse_goal(args.until, args.pattern, profile, args.all)
