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


def test_each_choice_has_the_line_of_its_own_key() -> None:
    config = parse_app_config('[keys]\nhelp-me = "f2"\n"help" = "f1"\n[escape]\nhelp = "h"\n')
    assert config.keys == (KeyChoice("help-me", "f2", 2), KeyChoice("help", "f1", 3))
    assert config.escape == (KeyChoice("help", "h", 5),)


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
    # the line is where the key is written, not the first line that mentions it
    ('# the theme is chosen in the app\n[theme]\nname = "x"\n', 2,
     "unknown setting 'theme' (config.toml holds the tables [keys], [escape])"),
    ('sessions = "f2"\n[keys]\n', 1, "unknown setting 'sessions'"),
    ('[keys]\n# sessions was f2\nsessions = 2\n', 3, "the key must be a string"),
    ('[keys]\nsessions.x = "f2"\n', 2, "the key must be a string"),
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
