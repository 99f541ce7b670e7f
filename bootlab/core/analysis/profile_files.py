"""Profile files before they are parsed: the built-ins shipped in `bootlab/profiles/` (their
names, by kind, and their text) and a file's [profile] table read ahead, so `profiles` can load
what a profile `extends` and `include`s before building it.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any


def builtin_names(kind: str | None = None) -> list[str]:
    """Names of the profiles shipped with bootlab (of one kind: "boot" or "stage")."""
    folder = resources.files("bootlab") / "profiles"
    names = sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))
    if kind is None:
        return names
    return [n for n in names if profile_header(builtin_text(n) or "").get("kind", "boot") == kind]


def profile_header(text: str) -> dict[str, Any]:
    """A profile's [profile] table, or {} when it cannot be read (`profiles.parse_profile`
    says why)."""
    try:
        head = tomllib.loads(text).get("profile", {})
    except tomllib.TOMLDecodeError:
        return {}
    return head if isinstance(head, dict) else {}


def builtin_text(name: str) -> str | None:
    """The text of the built-in profile `name`, or None when there is none."""
    path = resources.files("bootlab") / "profiles" / f"{name}.toml"
    return path.read_text(encoding="utf-8") if path.is_file() else None
