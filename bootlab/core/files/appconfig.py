"""The user's settings for the app: `<config dir>/config.toml`, read once when the app starts.

```toml
[keys]              # binding id -> key, or several keys separated by commas
sessions = "f2"
seek-back = "comma,left_square_bracket"

[escape]            # live console: the key after Ctrl-T -> escape id
sessions = "s"
```

This module checks the file's shape (tables, strings, key syntax) and keeps each entry's line,
so the app, which knows which binding and escape ids exist, can report an unknown one as
`file:line: reason` too. A missing file is an empty configuration.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from bootlab.core.files.config import config_dir
from bootlab.core.files.errors import LocatedError, toml_error_line, toml_line, unknown_key

CONFIG_FILE = "config.toml"
TABLES = ("keys", "escape")

_MODIFIERS = r"(?:(?:ctrl|shift|alt|meta|super|hyper)\+)*"
_KEY = re.compile(_MODIFIERS + r"(?:[a-z][a-z0-9_]+|[^\s,])")
"""One key: Textual's name for it (`f2`, `ctrl+s`, `question_mark`) or its character (`?`)."""


class AppConfigError(LocatedError):
    """config.toml cannot be used; the message reads `file:line: reason`."""


@dataclass(frozen=True)
class KeyChoice:
    """One entry of `[keys]` or `[escape]`."""

    id: str
    keys: str
    """The key, or keys separated by commas, as written."""
    line: int | None
    """Where it is written (for messages)."""


@dataclass(frozen=True)
class AppConfig:
    """What config.toml asks for."""

    source: str = CONFIG_FILE
    """The file it was read from."""
    keys: tuple[KeyChoice, ...] = ()
    escape: tuple[KeyChoice, ...] = ()

    def keymap(self) -> dict[str, str]:
        """Binding id -> keys, for `App.set_keymap`."""
        return {choice.id: choice.keys for choice in self.keys}


def config_path() -> Path:
    """Where the app's config file is."""
    return config_dir() / CONFIG_FILE


def load_app_config(path: Path | None = None) -> AppConfig:
    """Read config.toml (by default `config_path()`); no file is an empty configuration.

    Raises:
        AppConfigError: unreadable, not TOML, or a table or value of the wrong shape.
    """
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return AppConfig(str(path))
    except (OSError, UnicodeDecodeError) as error:
        raise AppConfigError(str(path), None, f"cannot be read: {error}") from None
    return parse_app_config(text, str(path))


def parse_app_config(text: str, source: str = CONFIG_FILE) -> AppConfig:
    """The configuration in TOML text.

    Raises:
        AppConfigError: not TOML, or a table or value of the wrong shape.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise AppConfigError(source, toml_error_line(error), f"not valid TOML: {error}") \
            from None
    name = unknown_key(data, TABLES)
    if name is not None:
        raise AppConfigError(source, toml_line(text, (name,)),
                             f"unknown setting {name!r} (config.toml holds the tables "
                             f"{', '.join(f'[{t}]' for t in TABLES)})")
    return AppConfig(source, _choices(text, source, data, "keys", several=True),
                     _choices(text, source, data, "escape", several=False))


def _choices(text: str, source: str, data: dict[str, object], table: str,
             several: bool) -> tuple[KeyChoice, ...]:
    entries = data.get(table, {})
    if not isinstance(entries, dict):
        raise AppConfigError(source, toml_line(text, (table,)), f"'{table}' must be a table, "
                             f"[{table}] with lines such as: sessions = \"f2\"")
    choices = []
    for ident, value in entries.items():
        line = toml_line(text, (table, ident))
        if not isinstance(value, str):
            raise AppConfigError(source, line, f"[{table}] {ident}: the key must be a string, "
                                 "such as \"f2\", \"ctrl+s\" or \"?\"")
        keys = [key.strip() for key in value.split(",")] if several else [value.strip()]
        bad = [key for key in keys if not _KEY.fullmatch(key)]
        if bad:
            what = "keys separated by commas" if several else "one key"
            raise AppConfigError(source, line, f"[{table}] {ident}: {bad[0]!r} is not a key; "
                                 f"write {what}, such as \"f2\", \"ctrl+s\", "
                                 "\"question_mark\" or \"?\"")
        choices.append(KeyChoice(ident, ",".join(keys), line))
    return tuple(choices)
