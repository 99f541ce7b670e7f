"""The app's pure parts: phase bars, keys sent to the board, theme files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.ui.keys import key_bytes
from bootlab.ui.themes import load_themes, parse_theme
from bootlab.ui.widgets.phase_panel import bar

THEMES = Path(__file__).resolve().parents[2] / "themes"


@pytest.mark.parametrize(("start", "end", "expected"), [
    (0.0, 10.0, "██████████"),
    (0.0, 5.0, "█████     "),
    (5.0, 10.0, "     █████"),
    (2.0, 2.0, "  ▏       "),
    (0.0, 0.5, "▌         "),
    (9.99, 20.0, "         █"),
])
def test_bar(start: float, end: float, expected: str) -> None:
    assert bar(start, end, 10.0, 10) == expected


def test_bar_without_an_axis_is_blank() -> None:
    assert bar(0.0, 1.0, 0.0, 4) == "    "


@pytest.mark.parametrize(("key", "character", "expected"), [
    ("a", "a", b"a"), ("A", "A", b"A"), ("enter", "\r", b"\r"), ("backspace", "\x08", b"\x7f"),
    ("ctrl+c", "\x03", b"\x03"), ("ctrl+d", "\x04", b"\x04"), ("tab", "\t", b"\t"),
    ("escape", "\x1b", b"\x1b"), ("up", None, b"\x1b[A"), ("space", " ", b" "),
    ("eacute", "é", "é".encode()), ("f5", None, None),
])
def test_key_bytes(key: str, character: str | None, expected: bytes | None) -> None:
    assert key_bytes(key, character) == expected


def test_bundled_themes_load() -> None:
    loaded = load_themes([THEMES])
    assert loaded.failures == []
    assert set(loaded.themes) == {"bootlab-dark", "bootlab-light", "bootlab-high-contrast"}
    assert not loaded.themes["bootlab-light"].dark


def test_bad_theme_files_are_named_and_the_rest_load(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text('name = "mine"\nprimary = "#112233"\n')
    (tmp_path / "typo.toml").write_text('name = "x"\nprimary = "#112233"\nprimry = "#000"\n')
    (tmp_path / "colour.toml").write_text('name = "y"\nprimary = "not a colour"\n')
    (tmp_path / "broken.toml").write_text('name = "z\n')
    loaded = load_themes([tmp_path])
    assert set(loaded.themes) == {"mine"}
    failures = "\n".join(loaded.failures)
    assert "typo.toml: unknown key(s) primry" in failures
    assert "colour.toml" in failures and "broken.toml" in failures


def test_a_theme_needs_a_name_and_a_primary_colour() -> None:
    with pytest.raises(ValueError, match="'primary' is required"):
        parse_theme('name = "x"\n')
