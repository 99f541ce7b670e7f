"""Fixtures of the app's tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.paths import example_sessions


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A sessions folder holding copies of the six bundled boots."""
    target = tmp_path / "sessions"
    target.mkdir()
    for path in example_sessions():
        shutil.copy(path, target)
    return target
