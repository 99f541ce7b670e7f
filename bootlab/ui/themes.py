"""Themes as TOML files holding exactly the fields of `textual.theme.Theme`.

Built-in themes live in the repository's `themes/` (inside an installed wheel:
`bootlab/themes/`); users add their own in `<config dir>/themes/*.toml`, and a user theme with
a built-in's name replaces it. A file that cannot be used is named in `ThemeLoad.failures`,
so the app can say so once and carry on with the others.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from textual.color import ColorParseError
from textual.theme import Theme

from bootlab.core.files.config import config_dir
from bootlab.core.files.errors import toml_line

DEFAULT_THEME = "bootlab-dark"
_FIELDS = [f.name for f in fields(Theme)]
_COLOURS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
            "background", "surface", "panel", "boost")
_NUMBERS = ("luminosity_spread", "text_alpha")
_FLAGS = ("dark", "ansi")


@dataclass
class ThemeLoad:
    """What loading the theme folders gave."""

    themes: dict[str, Theme] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    """One line per unusable file: its path and why."""


def theme_dirs() -> list[Path]:
    """Folders searched for themes, built-ins first (later ones replace by name)."""
    package = Path(__file__).resolve().parent.parent
    return [package / "themes", package.parent / "themes", config_dir() / "themes"]


def load_themes(folders: list[Path] | None = None) -> ThemeLoad:
    """Read every `*.toml` theme in the folders (by default `theme_dirs()`)."""
    result = ThemeLoad()
    for folder in theme_dirs() if folders is None else folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = parse_theme(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError) as error:
                result.failures.append(f"{path}: {error}")
                continue
            result.themes[theme.name] = theme
    return result


def parse_theme(text: str) -> Theme:
    """A theme from TOML text.

    Raises:
        tomllib.TOMLDecodeError: not TOML.
        ValueError: an unknown key (with its line), a missing name or primary colour, a value
            of the wrong type.
    """
    data = tomllib.loads(text)
    unknown = [key for key in data if key not in _FIELDS]
    if unknown:
        line = toml_line(text, (unknown[0],))
        raise ValueError(f"unknown key(s) {', '.join(unknown)}{f' at line {line}' if line else ''}"
                         f" (a theme holds only {', '.join(_FIELDS)})")
    for key in ("name", "primary"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"'{key}' is required (a string)")
    for key in _COLOURS:
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"'{key}' must be a colour string such as \"#4FA3E0\"")
    for key in _NUMBERS:
        if key in data and not isinstance(data[key], int | float):
            raise ValueError(f"'{key}' must be a number")
    for key in _FLAGS:
        if key in data and not isinstance(data[key], bool):
            raise ValueError(f"'{key}' must be true or false")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
            isinstance(v, str) for v in variables.values()):
        raise ValueError("'variables' must be a table of strings")
    theme = Theme(**data)
    try:
        theme.to_color_system()  # a bad colour fails here, while the file is known
    except ColorParseError as error:
        raise ValueError(str(error)) from None
    return theme

