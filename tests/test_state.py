"""The remembered theme and baselines survive a restart; a broken state file starts afresh."""

from __future__ import annotations

from pathlib import Path

from bootlab.core.files.state import AppState, load_state, save_state


def test_round_trip(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    session = folder / "boot-1.jsonl"
    session.write_text("{}\n")
    state = AppState(theme="bootlab-light")
    state.set_baseline(folder, session)
    save_state(state, tmp_path / "state.json")
    again = load_state(tmp_path / "state.json")
    assert again.theme == "bootlab-light"
    assert again.baseline(folder) == session
    again.set_baseline(folder, None)
    assert again.baseline(folder) is None


def test_missing_baseline_file_is_forgotten(tmp_path: Path) -> None:
    state = AppState()
    state.set_baseline(tmp_path, tmp_path / "gone.jsonl")
    assert state.baseline(tmp_path) is None


def test_broken_file_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"{\"theme\": \xff")
    state = load_state(path)
    assert state.theme is None and state.problem is not None and "state.json" in state.problem
    path.write_text("[1, 2]")
    assert load_state(path).problem is not None
    assert load_state(tmp_path / "none.json") == AppState()
