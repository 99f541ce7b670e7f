"""Boot-time settings as data: the setting model and the files it is read from.

A setting (`bootdelay=0`, `quiet`, `lpj=N`, a trimmed kernel read, ...) is a `[[setting]]`
table in TOML: the built-ins in `bootlab/settings/builtin.toml` (which documents the schema),
plus the user's own in `settings/*.toml` beside the sessions or in the config folder. Keeping
them as data lets a user add a board's own knob without touching code. Whether one applies to a
board is `applicability`, what it types at the prompt is `plan`, and what state a boot shows
it in is `evidence`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from bootlab.core.analysis.regex_parse import user_pattern
from bootlab.core.board.cmdline import split_cmdline
from bootlab.core.board.conditions import CONDITIONS
from bootlab.core.board.evidence_rules import EvidenceRule, parse_rules
from bootlab.core.board.hush import check_name
from bootlab.core.files.config import DEFAULT_SESSIONS, config_dir
from bootlab.core.files.errors import LocatedError, line_of, toml_error_line, toml_line

Kind = Literal["uboot_var", "baudrate", "cmdline_flag", "cmdline_value", "cmdline_remove",
               "cmdline_text", "read_trim"]
KINDS: tuple[str, ...] = get_args(Kind)
State = bool | str
"""A choice: True (on, with the setting's own value), False (off) or a value (on, with it)."""
VALUE_FROM = ("lpj", "rootfs_type")
"""Facts a setting can take its value from."""


class SettingsError(LocatedError):
    """A settings file could not be used; the message says where and why."""


@dataclass(frozen=True)
class Setting:
    """One setting, as read from TOML (see bootlab/settings/builtin.toml for the keys)."""

    id: str
    key: str
    """One character: the key that toggles it in the app."""
    title: str
    kind: Kind
    help: str = ""
    var: str | None = None
    """uboot_var, baudrate: the U-Boot variable."""
    name: str | None = None
    """cmdline kinds: the kernel parameter."""
    value: str | None = None
    """The value when switched on (a choice may give another)."""
    value_from: str | None = None
    """A fact the value is taken from: "lpj" or "rootfs_type"."""
    off: str = "restore"
    """uboot_var switched off: "restore" (leave it), "delete" or a value to set."""
    also: tuple[str, ...] = ()
    """Kernel parameters added along with it."""
    validate: str | None = None
    """Regular expression a value must match in full."""
    choices: tuple[str, ...] = ()
    refuse: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Value -> why it is refused unless forced."""
    applies_when: tuple[str, ...] = ()
    warn: str | None = None
    """Shown whenever it is applied; "{value}" is replaced by the value."""
    conflicts: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Other setting id -> warning shown when both are on."""
    page: int = 2048
    """read_trim: the flash page size in bytes."""
    spare_pages: int = 1
    """read_trim: pages read beyond the image."""
    evidence: tuple[EvidenceRule, ...] = ()
    """What in a boot log proves its state (`evidence_rules`)."""
    kernel_default: str | None = None
    """cmdline kinds: what decides when the parameter is absent (e.g. CONFIG_PRINTK_TIME), so
    its absence proves nothing."""
    before_prompt: bool = False
    """It acts before the bootloader's prompt (the autoboot countdown, U-Boot's own console):
    only a saved environment and a reset show it, never a boot typed at the prompt."""
    source: str = "<built-in>"
    line: int | None = None


_KEYS = {"id", "key", "title", "kind", "help", "var", "name", "value", "value_from", "off",
         "also", "validate", "choices", "refuse", "applies_when", "warn", "conflicts", "page",
         "spare_pages", "evidence", "kernel_default", "before_prompt"}
_PARAM = re.compile(r"[A-Za-z0-9_.-]+")


def settings_dirs(sessions: Path | None = None) -> list[Path]:
    """Folders searched for user settings, nearest first: `<sessions>/settings`, then
    `<config dir>/settings` (beside the profile folders)."""
    return [(sessions or DEFAULT_SESSIONS) / "settings", config_dir() / "settings"]


def parse_settings(text: str, source: str = "<string>") -> list[Setting]:
    """Settings from a TOML document of `[[setting]]` tables.

    Raises:
        SettingsError: the TOML is malformed or a setting is invalid (file:line: reason).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(source, toml_error_line(error), f"not valid TOML: {error}") from None
    extra = set(data) - {"setting"}
    if extra:
        raise SettingsError(source, line_of(text, sorted(extra)[0]),
                            f"unknown table(s) {', '.join(sorted(extra))}: settings are "
                            "[[setting]] tables")
    entries = data.get("setting", [])
    if not isinstance(entries, list):
        raise SettingsError(source, line_of(text, "setting"),
                            "settings must be written as [[setting]] tables")
    settings: list[Setting] = []
    seen_line = 1
    for index, entry in enumerate(entries):
        ident = entry.get("id") if isinstance(entry, dict) else None
        line = line_of(text, f'"{ident}"', seen_line) if isinstance(ident, str) else None
        seen_line = line or seen_line
        unknown = [key for key in entry if key not in _KEYS] if isinstance(entry, dict) else []
        if unknown:   # at the line of the key itself, as profiles and themes say theirs
            raise SettingsError(source, toml_line(text, ("setting", index, unknown[0])) or line,
                                f"setting {ident!r}: unknown key(s) {', '.join(unknown)} (a "
                                f"setting holds {', '.join(sorted(_KEYS))})")
        setting = _setting(entry, source, line)
        if any(s.id == setting.id for s in settings):
            raise SettingsError(source, line, f"setting {setting.id!r} is defined twice")
        settings.append(setting)
    return settings


def _text(entry: dict[str, Any], key: str, fail: Callable[[str], SettingsError],
          default: str | None = None) -> str | None:
    value = entry.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is not None and not isinstance(value, str):
        raise fail(f"{key} must be a string")
    return value


def _texts(entry: dict[str, Any], key: str,
           fail: Callable[[str], SettingsError]) -> tuple[str, ...]:
    values = entry.get(key, [])
    if not isinstance(values, list) or not all(isinstance(v, str | int) for v in values):
        raise fail(f"{key} must be a list of strings")
    return tuple(str(v) for v in values)


def _table(entry: dict[str, Any], key: str,
           fail: Callable[[str], SettingsError]) -> dict[str, str]:
    table = entry.get(key, {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise fail(f"{key} must be a table of strings, e.g. {{ \"-2\" = \"why\" }}")
    return {str(k): v for k, v in table.items()}


def _setting(entry: Any, source: str, line: int | None) -> Setting:
    if not isinstance(entry, dict):
        raise SettingsError(source, line, "each [[setting]] must be a table")
    ident = entry.get("id")

    def fail(reason: str) -> SettingsError:
        return SettingsError(source, line, f"setting {ident!r}: {reason}")

    if not isinstance(ident, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", ident):
        raise SettingsError(source, line, f"setting id {ident!r} must be lower_snake_case")
    key = entry.get("key")
    if not isinstance(key, str) or len(key) != 1 or not key.isprintable() or key.isspace():
        raise fail("key must be one printable character")
    title = _text(entry, "title", fail)
    if not title:
        raise fail("title is missing")
    kind = entry.get("kind")
    if kind not in KINDS:
        raise fail(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    var = _text(entry, "var", fail, "baudrate" if kind == "baudrate" else None)
    if kind in ("uboot_var", "baudrate"):
        if var is None:
            raise fail(f"a {kind} setting needs var = \"<U-Boot variable>\"")
        try:
            check_name(var)
        except ValueError as error:
            raise fail(str(error)) from None
    name = _text(entry, "name", fail)
    if kind in ("cmdline_flag", "cmdline_value", "cmdline_remove") and (
            name is None or not _PARAM.fullmatch(name)):
        raise fail(f"a {kind} setting needs name = \"<kernel parameter>\" "
                   "(letters, digits, _ . -)")
    value_from = _text(entry, "value_from", fail)
    if value_from is not None and value_from not in VALUE_FROM:
        raise fail(f"value_from must be one of {', '.join(VALUE_FROM)}")
    off = _text(entry, "off", fail, "restore") or "restore"
    validate = _text(entry, "validate", fail)
    if validate is not None:
        try:
            user_pattern(validate)
        except re.error as error:
            raise fail(f"bad validate pattern {validate!r}: {error}") from None
    also = _texts(entry, "also", fail)
    if any(len(split_cmdline(word)) != 1 for word in also):
        raise fail("each entry of also must be one kernel parameter")
    conditions = _texts(entry, "applies_when", fail)
    for text in conditions:
        cond, _, arg = text.partition(":")
        if cond not in CONDITIONS:
            raise fail(f"unknown condition {cond!r} (known: {', '.join(CONDITIONS)})")
        if CONDITIONS[cond][1] != bool(arg):
            raise fail(f"condition {cond!r} {'needs' if CONDITIONS[cond][1] else 'takes no'} "
                       "argument after ':'")
        if cond == "log":
            try:
                user_pattern(arg)
            except re.error as error:
                raise fail(f"bad log pattern {arg!r}: {error}") from None
    numbers: dict[str, int] = {}
    for number_key, default, least in (("page", 2048, 1), ("spare_pages", 1, 0)):
        number = entry.get(number_key, default)
        if not isinstance(number, int) or isinstance(number, bool) or number < least:
            raise fail(f"{number_key} must be a whole number >= {least}")
        numbers[number_key] = number
    evidence = parse_rules(entry["evidence"], fail) if "evidence" in entry else ()
    kernel_default = _text(entry, "kernel_default", fail)
    if kernel_default is not None and not kind.startswith("cmdline"):
        raise fail("kernel_default goes with kernel parameters (cmdline kinds) only")
    before_prompt = entry.get("before_prompt", False)
    if not isinstance(before_prompt, bool):
        raise fail("before_prompt must be true or false")
    return Setting(
        id=ident, key=key, title=title, kind=kind, help=_text(entry, "help", fail) or "",
        var=var, name=name, value=_text(entry, "value", fail), value_from=value_from,
        off=off, also=also, validate=validate, choices=_texts(entry, "choices", fail),
        refuse=_table(entry, "refuse", fail), applies_when=conditions,
        warn=_text(entry, "warn", fail), conflicts=_table(entry, "conflicts", fail),
        page=numbers["page"], spare_pages=numbers["spare_pages"], evidence=evidence,
        kernel_default=kernel_default, before_prompt=before_prompt, source=source, line=line)


def load_settings(search_dirs: Sequence[Path] = ()) -> list[Setting]:
    """The built-in settings, then the user's `*.toml` in `search_dirs` (nearest first; a
    setting with an id already known replaces it in place).

    Raises:
        SettingsError: a file is unreadable or invalid, two settings share a key, or a
            conflict names an unknown setting.
    """
    builtin = resources.files("bootlab") / "settings" / "builtin.toml"
    settings = parse_settings(builtin.read_text(encoding="utf-8"), "<built-in settings>")
    for folder in reversed(search_dirs):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise SettingsError(str(path), None, f"cannot read: {error}") from None
            for setting in parse_settings(text, str(path)):
                index = next((i for i, s in enumerate(settings) if s.id == setting.id), None)
                if index is None:
                    settings.append(setting)
                else:
                    settings[index] = setting
    ids = {s.id for s in settings}
    keys: dict[str, Setting] = {}
    for setting in settings:
        if setting.key in keys:
            raise SettingsError(setting.source, setting.line,
                                f"key {setting.key!r} of {setting.id!r} is already used by "
                                f"{keys[setting.key].id!r} ({keys[setting.key].source})")
        keys[setting.key] = setting
        for other in setting.conflicts:
            if other not in ids:
                raise SettingsError(setting.source, setting.line,
                                    f"setting {setting.id!r}: conflicts names unknown setting "
                                    f"{other!r}")
    return settings
