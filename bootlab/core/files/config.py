"""Where bootlab keeps things: the sessions folder and the folders searched for profiles.

| what             | where                                                        |
|------------------|--------------------------------------------------------------|
| sessions         | `./sessions` of the working directory, or `--sessions DIR`   |
| user profiles    | `<sessions>/profiles/*.toml`, then `<config dir>/profiles/`  |
| config dir       | platformdirs' user config dir for "bootlab" ($BOOTLAB_CONFIG_DIR overrides) |
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_path

DEFAULT_SESSIONS = Path("sessions")


def sessions_dir(option: Path | None = None) -> Path:
    """The sessions folder: `--sessions DIR`, else ./sessions."""
    return option or DEFAULT_SESSIONS


def config_dir() -> Path:
    """The user's bootlab config folder (it need not exist)."""
    override = os.environ.get("BOOTLAB_CONFIG_DIR")
    return Path(override) if override else user_config_path("bootlab")


def profile_dirs(sessions: Path | None = None) -> list[Path]:
    """Folders searched for user profiles, nearest first."""
    return [(sessions or DEFAULT_SESSIONS) / "profiles", config_dir() / "profiles"]


def examples_dir() -> Path | None:
    """The bundled example sessions: inside an installed wheel, or `examples/` of a checkout
    (never `sessions/`, where a checkout's own recordings go)."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package / "examples", package.parent / "examples"):
        if candidate.is_dir():
            return candidate
    return None
