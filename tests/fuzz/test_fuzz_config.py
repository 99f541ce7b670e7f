"""Property fuzzing of the TOML readers: profiles, settings, budgets, themes, the app config.

Each document ends in data or the reader's own error naming the file; a profile that loads is
also used on a real boot, so its patterns run.
"""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from support.fuzzcount import count
from support.paths import example_sessions
from support.strategies import fuzz
from support.tomlgen import (
    appconfig_docs,
    budget_docs,
    profile_docs,
    settings_docs,
    theme_docs,
    toml_text,
)

from bootlab.core.analysis.bootlog import read_boot
from bootlab.core.analysis.budgets import BudgetError, parse_budgets
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import ProfileError, load_profile, parse_profile
from bootlab.core.board.evidence import settings_evidence
from bootlab.core.board.facts import facts_from_log
from bootlab.core.board.settings import SettingsError, parse_settings
from bootlab.core.capture.session import load_session
from bootlab.core.files.appconfig import AppConfigError, parse_app_config

pytestmark = pytest.mark.usefixtures("fuzz_counts")
LINUX = load_profile("linux")
BOOT = load_session(example_sessions("default")[0]).data
FILE = "fuzz.toml"


@fuzz(400)
@given(text=toml_text(profile_docs))
def test_profiles(text: str) -> None:
    count("profiles.parse_profile")
    for base in (None, LINUX):
        try:
            profile = parse_profile(text, FILE, base)
        except ProfileError as error:
            assert str(error).startswith(FILE)
            continue
        analyze(BOOT[:4000], profile)


@fuzz(400)
@given(text=toml_text(settings_docs))
def test_settings(text: str) -> None:
    count("settings.parse_settings")
    try:
        settings = parse_settings(text, FILE)
    except SettingsError as error:
        assert str(error).startswith(FILE)
        return
    assert all(setting.source == FILE for setting in settings)
    facts_from_log(BOOT[:4000].decode("latin-1"))
    for evidence in settings_evidence(settings, read_boot(BOOT[:6000])).values():
        assert evidence.how in ("log", "inferred", "session")


@fuzz(400)
@given(text=toml_text(budget_docs))
def test_budgets(text: str) -> None:
    count("budgets.parse_budgets")
    try:
        budgets = parse_budgets(text, FILE)
    except BudgetError as error:
        assert str(error).startswith(FILE)
        return
    assert budgets.budgets and all(b.limit > 0 for b in budgets.budgets)


@fuzz(300)
@given(text=toml_text(theme_docs))
def test_themes(text: str) -> None:
    from bootlab.ui.themes import parse_theme

    count("ui.themes.parse_theme")
    try:
        parse_theme(text)
    except (tomllib.TOMLDecodeError, ValueError) as error:  # its documented errors
        assert str(error)


@fuzz(300)
@given(text=toml_text(appconfig_docs))
def test_app_config(text: str) -> None:
    count("appconfig.parse_app_config")
    try:
        parse_app_config(text, FILE)
    except AppConfigError as error:
        assert str(error).startswith(FILE)
