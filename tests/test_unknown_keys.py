"""Unknown keys in the user's TOML files are errors at their line: where a key is written
(`toml_line`), a setting's evidence rule, a theme. Profiles, budgets and config.toml have theirs
in their own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.core.board.settings import SettingsError, parse_settings
from bootlab.core.files.errors import toml_line
from bootlab.ui.themes import load_themes

PROFILE = """\
# name = "not this one"
name = "above"
[profile]
title = "t"
name = "x"

[[milestone]]
id = "a"
match = [
  'name = ',
]
[[milestone]]
id = "b"
unless = { load = 'x' }
"quoted.key" = 1
[milestone.fallback]
after = ["a"]
s = '''
skip = []
'''
skip = []
[other]
"""


@pytest.mark.parametrize(("path", "line"), [
    (("name",), 2),                                   # not the comment, not [profile]'s
    (("profile",), 3),
    (("profile", "name"), 5),
    (("milestone", 0), 7),
    (("milestone", 0, "match"), 9),
    (("milestone", 1, "id"), 13),                     # the second [[milestone]]
    (("milestone", 1, "unless", "load"), 14),         # inside an inline table: its line
    (("milestone", 1, "quoted.key"), 15),
    (("milestone", 1, "fallback", "skip"), 21),       # not the text of the multi-line string
    (("milestone", 1, "fallback", "before"), 16),     # not written: the table around it
    (("other", "x"), 22),
    (("nowhere",), None),
])
def test_toml_line_finds_where_a_key_is_written(path: tuple[str | int, ...],
                                                line: int | None) -> None:
    assert toml_line(PROFILE, path) == line


def test_an_unknown_key_in_an_evidence_rule_says_what_is_allowed() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings('[[setting]]\nid = "x"\nkey = "x"\ntitle = "X"\nkind = "uboot_var"\n'
                       'var = "xvar"\nevidence = [\n  { seen = "stamps", state = "on", '
                       'note = "n", sen = 1 },\n]\n', "s.toml")
    assert str(caught.value) == (
        "s.toml:2: setting 'x': evidence rule 1: unknown key(s) sen; allowed there: seen, "
        "unseen, given, state, value_of, value, how, note")


def test_an_unknown_theme_key_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#112233"\n\n[colours]\n'
                                        'panel = "#000000"\n')
    loaded = load_themes([tmp_path])
    assert loaded.themes == {}
    assert loaded.failures == [
        f"{tmp_path / 'mine.toml'}: unknown key(s) colours at line 4 (a theme holds only name, "
        "primary, secondary, warning, error, success, accent, foreground, background, surface, "
        "panel, boost, dark, luminosity_spread, text_alpha, variables, ansi)"]
