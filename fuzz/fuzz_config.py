"""Fuzz the TOML readers: marker profiles, settings, budgets; each ends in data or its error."""

from __future__ import annotations

import atheris

with atheris.instrument_imports():
    from _common import main

    from bootlab.core.analysis.budgets import BudgetError, parse_budgets
    from bootlab.core.analysis.profiles import ProfileError, load_profile, parse_profile
    from bootlab.core.board.settings import SettingsError, parse_settings

_LINUX = load_profile("linux")


def one_input(data: bytes) -> None:
    """Parse `data` (UTF-8, bad bytes replaced) with the reader its first byte picks."""
    if not data:
        return
    text = data[1:].decode("utf-8", "replace")
    choice = data[0] % 4
    try:
        if choice == 0:
            parse_profile(text, "fuzz.toml")
        elif choice == 1:
            parse_profile(text, "fuzz.toml", base=_LINUX)
        elif choice == 2:
            parse_settings(text, "fuzz.toml")
        else:
            parse_budgets(text, "fuzz.toml")
    except (ProfileError, SettingsError, BudgetError) as error:
        assert str(error).startswith("fuzz.toml"), "the error does not name the file"


if __name__ == "__main__":
    main(one_input)
