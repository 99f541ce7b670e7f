"""config.toml: remapped keys and Ctrl-T escapes; a bad file is named with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.core.files.appconfig import (
    AppConfig,
    AppConfigError,
    KeyChoice,
    config_path,
    load_app_config,
    parse_app_config,
)

GOOD = """\
# keys I like
[keys]
sessions = "f5"
seek-back = "comma, left_square_bracket"
search = "?"

[escape]
sessions = "S"
"""


def test_keys_and_escapes_with_their_lines() -> None:
    config = parse_app_config(GOOD, "my.toml")
    assert config.keys == (KeyChoice("sessions", "f5", 3),
                           KeyChoice("seek-back", "comma,left_square_bracket", 4),
                           KeyChoice("search", "?", 5))
    assert config.escape == (KeyChoice("sessions", "S", 8),)
    assert config.keymap() == {"sessions": "f5", "seek-back": "comma,left_square_bracket",
                               "search": "?"}


def test_no_file_is_an_empty_config(tmp_path: Path) -> None:
    assert load_app_config(tmp_path / "none.toml") == AppConfig(str(tmp_path / "none.toml"))


def test_the_file_lives_in_the_config_folder(tmp_path: Path) -> None:
    assert config_path() == tmp_path / "config" / "config.toml"  # BOOTLAB_CONFIG_DIR
    config_path().parent.mkdir()
    config_path().write_text('[keys]\nhelp = "f1"\n')
    assert load_app_config().keymap() == {"help": "f1"}


@pytest.mark.parametrize(("text", "line", "reason"), [
    ('[keys]\nsessions = "f2"\n\nsessions = "f3"\n', 4, "not valid TOML"),
    ('[keys]\nsessions = 2\n', 2, "the key must be a string"),
    ('[keys]\nsessions = "F 2"\n', 2, "'F 2' is not a key"),
    ('[keys]\nsessions = ""\n', 2, "'' is not a key"),
    ('[escape]\nsessions = "s,t"\n', 2, "'s,t' is not a key; write one key"),
    ('keys = "f2"\n', 1, "'keys' must be a table"),
    ('[theme]\nname = "x"\n', 1, "unknown setting 'theme'"),
])
def test_bad_config_says_file_line_and_reason(text: str, line: int, reason: str) -> None:
    with pytest.raises(AppConfigError) as caught:
        parse_app_config(text, "config.toml")
    assert caught.value.line == line and reason in caught.value.reason
    assert str(caught.value).startswith(f"config.toml:{line}: ")


def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"[keys]\nhelp = \"\xff\"\n")
    with pytest.raises(AppConfigError, match="cannot be read"):
        load_app_config(path)
