"""Config files are data: TOML profiles, settings, budgets and themes cannot run code or expand
format strings, and a user pattern that would backtrack for minutes is refused with file:line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import BOOTLAB, example_sessions

from bootlab.core.analysis.budgets import parse_budgets
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import ProfileError, parse_profile
from bootlab.core.analysis.regex_parse import user_pattern
from bootlab.core.board.facts import facts_from_log
from bootlab.core.board.plan import plan
from bootlab.core.board.settings import SettingsError, parse_settings
from bootlab.core.capture.session import load_session
from bootlab.ui.themes import parse_theme

CODE = "__import__('os').system('touch PWNED')"
BOOT = load_session(example_sessions("default")[0]).data


@pytest.mark.parametrize("pattern", [
    r"(a+)+$", r"(\w+\s?)*$", r"(.+,)*$", r"(x+x+)+y", r"(?i)(a+A)+$", r"(a|b+)*",
    r"((a+)b?)+", r"(\d+){1,50}", r"(?>(a+)+b)", r"x(?=(a+)+$)", r"(a|aa)+$", r"(a|ab|b)+$",
])
def test_patterns_that_backtrack_exponentially_are_refused(pattern: str) -> None:
    with pytest.raises(re.error, match="exponential time"):
        user_pattern(pattern)


@pytest.mark.parametrize("pattern", [
    r"^Starting kernel", r"(?:\d+\.)+$", r"[a-z0-9]+(,[a-z0-9]+)*$", r"(\w+\s)*$",
    r"(?:\S+\s+)*$", r"(?>a+)+$", r"(ab+)+$", r"(foo|bar)+$", r"(?:(a|aa),)+$",
    r"([^,]+,)*x", r"(a+A)+$",
])
def test_patterns_that_stay_fast_are_kept_and_are_fast(pattern: str) -> None:
    user_pattern(pattern)
    # Lines of the pattern's own characters, which almost match: in a process of its own,
    # as Python's regex engine cannot be interrupted.
    probe = ("import re, sys; p = re.compile(sys.argv[1]); a = sys.argv[2]\n"
             "for n in (20, 200, 4096): p.search((a * n)[:n] + '!')")
    letters = "".join(ch for ch in pattern if ch.isalnum() and ch not in "dsSw") or "a"
    subprocess.run([sys.executable, "-c", probe, pattern, letters], check=True, timeout=10)


def test_a_slow_pattern_in_a_profile_or_setting_names_the_file_and_line(tmp_path: Path) -> None:
    profile = '[profile]\nname = "slow"\n\n[[milestone]]\nid = "ready"\nmatch = \'^(\\w+\\s?)*$\'\n'
    with pytest.raises(ProfileError, match=r"^slow\.toml:5: ready: bad pattern .*exponential"):
        parse_profile(profile, "slow.toml")
    setting = ('[[setting]]\nid = "x"\nkey = "x"\ntitle = "X"\nkind = "cmdline_flag"\n'
               'name = "x"\napplies_when = ["log:(a+)+$"]\n')
    with pytest.raises(SettingsError, match=r"^s\.toml:2: .*exponential"):
        parse_settings(setting, "s.toml")
    folder = tmp_path / "sessions" / "profiles"
    folder.mkdir(parents=True)
    (folder / "slow.toml").write_text(profile)
    done = subprocess.run([*BOOTLAB, "profiles", "--sessions", str(tmp_path / "sessions")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "slow.toml:5" in done.stderr


def test_code_in_config_values_stays_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    profile = parse_profile(f'[profile]\nname = "p"\ntitle = "{CODE}"\n[[milestone]]\n'
                            f'id = "x"\ntitle = "{CODE}"\nmatch = "{CODE}"\n', "p.toml")
    analyze(BOOT + CODE.encode() + b"\n", profile)
    assert profile.title == CODE
    budgets = parse_budgets(f'[budgets]\n"{CODE}" = 1.0\n')
    assert budgets.budgets[0].target == CODE
    theme = parse_theme(f'name = "t"\nprimary = "#4FA3E0"\nvariables = {{ x = "{CODE}" }}\n')
    assert theme.variables["x"] == CODE
    assert not (tmp_path / "PWNED").exists()


def test_a_settings_warning_is_not_a_format_string() -> None:
    (setting,) = parse_settings(
        '[[setting]]\nid = "x"\nkey = "x"\ntitle = "X"\nkind = "uboot_var"\nvar = "xvar"\n'
        'value = "1"\nwarn = "{0.__class__} {value!r} %s {value}"\n', "s.toml")
    result = plan([setting], {"x": "{1}"}, {}, facts_from_log(None))
    assert result.warnings == ["X: {0.__class__} {value!r} %s {1}"]
