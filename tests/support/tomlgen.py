"""Hypothesis strategies writing TOML documents for the config readers, right and wrong."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

PATTERNS = ["^Starting kernel", r"(?P<ms>\d+) ms", "(", "[a-", "(?P<x>a)(?P<x>b)", r"(a+)+$",
            r"(\w+\s?)*$", "(?i)login: ?$", r"\1", "(?<=a)b", "a{99999}", "", ".*", "(?s).*"]
"""Regular expressions: ordinary, invalid, and ones that backtrack catastrophically."""
IDS = ["starting_kernel", "init", "login", "linux", "bootloader", "app_ready", "Bad-Id", "",
       "spl", "quiet", "bootdelay", "lpj", "x" * 80]


def _scalar() -> st.SearchStrategy[Any]:
    return st.one_of(st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                     st.text(max_size=12), st.sampled_from(PATTERNS), st.sampled_from(IDS),
                     st.sampled_from(["3s", "1500ms", "-1s", "0", "1e999s", "nan", "5 s", ".5",
                                      "#4FA3E0", "red", "ctrl+t", "f2", "comma,left", "{value}",
                                      "{0.__class__}", "%s%n", "$(touch pwned)", "__import__"]))


values = st.recursive(_scalar(), lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from([*IDS, "after", "skip"]), inner,
                                                 max_size=3)), max_leaves=8)


_ESCAPES = {**{chr(c): f"\\u{c:04x}" for c in [*range(0x20), 0x7F]}, '"': '\\"', "\\": "\\\\"}


def _key(key: str) -> str:
    return _value(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("-inf" if value < 0 else "inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(ch, ch) for ch in value) + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"


def dumps(document: dict[str, Any]) -> str:
    """TOML text for a document of scalars, tables and arrays of tables."""
    out = [f"{_key(k)} = {_value(v)}" for k, v in document.items()
           if not isinstance(v, dict) and not _tables(v)]
    for key, value in document.items():
        if isinstance(value, dict):
            out.append(f"[{_key(key)}]")
            out += [f"{_key(k)} = {_value(v)}" for k, v in value.items()]
        elif _tables(value):
            for table in value:
                out.append(f"[[{_key(key)}]]")
                out += [f"{_key(k)} = {_value(v)}" for k, v in table.items()]
    return "\n".join(out) + "\n"


def _tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _entry(keys: list[str], valid: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """A table using the reader's own keys (and a stranger now and then)."""
    return st.dictionaries(st.sampled_from([*keys, "unknown_key"]), values, max_size=6).flatmap(
        lambda extra: st.fixed_dictionaries({}, optional=valid).map(lambda d: {**d, **extra}
                                                                    if len(extra) < 2 else d))


_MARKER_KEYS = ["id", "title", "stage", "match", "occurrence", "partial", "new_boot", "fail",
                "fallback"]
_MARKER = {"id": st.sampled_from(IDS), "stage": st.sampled_from(["kernel", "userspace", "x"]),
           "match": st.one_of(st.sampled_from(PATTERNS), st.lists(st.sampled_from(PATTERNS),
                                                                  max_size=3)),
           "occurrence": st.sampled_from(["first", "last", "every", "often"]),
           "partial": st.booleans(), "new_boot": st.booleans(),
           "fallback": st.fixed_dictionaries({"after": st.sampled_from(IDS)},
                                             optional={"skip": st.lists(st.sampled_from(IDS))})}
profile_docs = st.fixed_dictionaries({}, optional={
    "profile": st.fixed_dictionaries({}, optional={
        "name": st.sampled_from(IDS), "extends": st.sampled_from(["linux", "resume", "nope"]),
        "reference": st.sampled_from([*IDS, "first-byte"]), "title": values}),
    "milestone": st.lists(_entry(_MARKER_KEYS, _MARKER), max_size=4)})

_SETTING_KEYS = ["id", "key", "title", "kind", "help", "var", "name", "value", "value_from",
                 "off", "also", "validate", "choices", "refuse", "applies_when", "warn",
                 "conflicts", "page", "spare_pages", "evidence", "kernel_default"]
_CONDITIONS = st.sampled_from(["stamps", "milestone:autoboot", "fallback:init", "stage:kernel",
                               "log:^U-Boot", "log:(a+)+$", "log:(", "milestone:Bad-Id", "x:y",
                               ""])
_RULE_KEYS = ["seen", "unseen", "given", "state", "value_of", "value", "how", "note"]
_RULE = {"seen": _CONDITIONS, "unseen": st.one_of(_CONDITIONS, st.lists(_CONDITIONS, max_size=3)),
         "given": st.one_of(_CONDITIONS, st.lists(_CONDITIONS, max_size=3)),
         "state": st.sampled_from(["on", "off", "maybe"]),
         "value_of": st.sampled_from(["bootdelay", "lpj", ""]),
         "value": st.sampled_from([*PATTERNS, r"(\d+)"]), "how": st.sampled_from(
             ["log", "inferred", "session"]), "note": st.sampled_from(["why {value}", ""])}
_SETTING = {"id": st.sampled_from(IDS), "key": st.sampled_from(["q", "Q", "", "ab", "\x1b"]),
            "title": st.text(max_size=8),
            "kind": st.sampled_from(["uboot_var", "baudrate", "cmdline_flag", "cmdline_value",
                                     "cmdline_remove", "cmdline_text", "read_trim", "other"]),
            "var": st.sampled_from(["bootdelay", "bootargs", "bad var", ""]),
            "name": st.sampled_from(["quiet", "lpj", "a b", ""]),
            "validate": st.sampled_from(PATTERNS),
            "applies_when": st.lists(st.sampled_from(["hush", "var:bootargs", "log:(a+)+$",
                                                      "log:(", "milestone:init", "nope"])),
            "warn": st.sampled_from(["{value}", "{0.__class__}", "%s"]),
            "page": st.integers(-1, 1 << 40),
            "evidence": st.lists(_entry(_RULE_KEYS, _RULE), max_size=3),
            "kernel_default": st.sampled_from(["CONFIG_PRINTK_TIME", ""])}
settings_docs = st.fixed_dictionaries({}, optional={
    "setting": st.lists(_entry(_SETTING_KEYS, _SETTING), max_size=4)})

budget_docs = st.fixed_dictionaries({"budgets": st.dictionaries(
    st.sampled_from([*IDS, "probe:mem.used_kb"]),
    st.one_of(st.floats(0.001, 100.0), st.sampled_from(["3s", "1500ms"]), _scalar()),
    max_size=5)})

theme_docs = st.dictionaries(
    st.sampled_from(["name", "primary", "secondary", "dark", "luminosity_spread", "variables",
                     "background", "nope"]), values, max_size=6).map(
    lambda d: {"name": "t", "primary": "#4FA3E0", **d})

appconfig_docs = st.fixed_dictionaries({}, optional={
    "keys": st.dictionaries(st.sampled_from(["sessions", "search", "quit", "x"]), values,
                            max_size=3),
    "escape": st.dictionaries(st.sampled_from(["sessions", "quit", "x"]), values, max_size=3)})


@st.composite
def toml_text(draw: st.DrawFn, documents: st.SearchStrategy[dict[str, Any]]) -> str:
    """A document written as TOML, sometimes with a stray key or a damaged character."""
    document = draw(documents)
    if draw(st.integers(0, 5)) == 0:
        document["stray"] = draw(values)
    text = dumps(document)
    if text and draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(["[", "=", '"', "\n", "\x00", "]]", "'''"])) + \
            text[at + 1:]
    return text
