"""The files of A/B runs read back: the sessions a state file (`ab-NAME.json`) stands for, and
the variants, in their run's order, of the run a session belongs to. `compare`, `advise` and
the app's recommendations read runs through these."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bootlab.core.board.abplan import ABState, ABStateError, state_path


def ab_variants(folder: Path, meta: Mapping[str, object]) -> list[str]:
    """The variants, in their run's order (the first is the reference), of the A/B run a
    session's meta names, from its state file in `folder`; [] for no A/B session or no state."""
    tag = meta.get("ab")
    if not isinstance(tag, dict):
        return []
    try:
        return list(ABState.load(state_path(folder, str(tag.get("name")))).variants)
    except (ABStateError, ValueError):
        return []


def ab_sessions(paths: Sequence[Path]) -> list[Path]:
    """Session files of A/B runs: a state file (`ab-NAME.json`) stands for its done sessions,
    a folder for every state file in it, and a session file for itself.

    Raises:
        ABStateError: a state file cannot be read.
    """
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += ab_sessions(sorted(path.glob("ab-*.json")))
        elif path.suffix == ".json":
            state = ABState.load(path)
            out += [path.parent / name for name in state.done.values()]
        else:
            out.append(path)
    return out
