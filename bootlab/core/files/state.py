"""What the app remembers between runs: the theme, and the baseline session of each folder.

This is state the app writes, not configuration the user writes: it lives in
`<config dir>/state.json`, is replaced atomically (a crash leaves the old or the new file, never
half of one), and an unreadable file is treated as empty (the app says so once) rather than
stopping the app.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from bootlab.core.files.atomic import write_atomic
from bootlab.core.files.config import config_dir

STATE_FILE = "state.json"


@dataclass
class AppState:
    """The remembered theme and baselines; `problem` says why the file could not be read."""

    theme: str | None = None
    baselines: dict[str, str] = field(default_factory=dict)
    """Sessions folder (resolved path) -> baseline session file name in it."""
    problem: str | None = None

    def baseline(self, folder: Path) -> Path | None:
        """The baseline session chosen for `folder`, if it still exists."""
        name = self.baselines.get(str(folder.resolve()))
        path = folder / name if name else None
        return path if path is not None and path.is_file() else None

    def set_baseline(self, folder: Path, session: Path | None) -> None:
        """Choose (or with None, forget) the baseline session of `folder`."""
        key = str(folder.resolve())
        if session is None:
            self.baselines.pop(key, None)
        else:
            self.baselines[key] = session.name


def state_path() -> Path:
    """Where the state is kept."""
    return config_dir() / STATE_FILE


def load_state(path: Path | None = None) -> AppState:
    """The remembered state; empty (with `problem` set) when the file is unreadable."""
    path = path or state_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return AppState()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return AppState(problem=f"{path}: cannot be read ({error}); starting afresh")
    if not isinstance(data, dict):
        return AppState(problem=f"{path}: not a JSON object; starting afresh")
    theme = data.get("theme")
    baselines = data.get("baselines")
    return AppState(
        theme=theme if isinstance(theme, str) else None,
        baselines={str(k): v for k, v in baselines.items() if isinstance(v, str)}
        if isinstance(baselines, dict) else {})


def save_state(state: AppState, path: Path | None = None) -> None:
    """Write the state atomically.

    Raises:
        OSError: the config folder cannot be written.
    """
    path = path or state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"theme": state.theme, "baselines": state.baselines}, indent=2)
    write_atomic(path, text + "\n")
