"""Helpers shared by the commands: errors on stderr, profile and folder resolution."""

from __future__ import annotations

import sys
from pathlib import Path

from bootlab.core.config import DEFAULT_SESSIONS, profile_dirs
from bootlab.core.profiles import Profile, load_profile
from bootlab.core.text import clean


def fail(message: str, code: int) -> int:
    """Print `bootlab: message` on stderr (on one line, no control character: messages may
    quote a file) and return the exit code."""
    sys.stderr.write(f"bootlab: {clean(message)}\n")
    return code


def sessions_dir(option: Path | None) -> Path:
    """The sessions folder from --sessions, else ./sessions."""
    return option or DEFAULT_SESSIONS


def resolve_profile(name: str | None, sessions: Path | None) -> Profile:
    """Load a profile by name or path, searching the user's folders first."""
    return load_profile(name or "linux", profile_dirs(sessions_dir(sessions)))
