"""What a marker's patterns make of a line, apart from the profile model and its TOML
(`profiles`): the hit (`Hit`, with the `Values` its named groups extract), the fast reject
tried before any pattern (`Quick`), and which patterns wait for a line's end (`ends_line`).
This is the part that runs on every line of a boot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bootlab.core.analysis.linescan import needle, split_flags, unnamed
from bootlab.core.analysis.regex_parse import anchored

Values = dict[str, int | float | str]
HitKind = Literal["match", "weak", "context", "recheck"]


@dataclass(frozen=True, slots=True)
class Hit:
    """A line that one of a marker's patterns matched."""

    kind: HitKind
    """`match` places the milestone; `weak` holds its place until a `match` line; `context`
    says what the next hit is about; `recheck` may show the milestone's line was not it."""
    pattern: int
    """Which pattern of that kind matched (its index)."""
    values: Values


def ends_line(pattern: str) -> bool:
    """Whether a pattern ends anchored at the line's end: with a `$` or `\\Z` not escaped."""
    for anchor in ("$", "\\Z"):
        if pattern.endswith(anchor):
            head = pattern[:-len(anchor)]
            return (len(head) - len(head.rstrip("\\"))) % 2 == 0
    return False


def hit_values(found: re.Match[str]) -> Values:
    """The named groups a pattern matched, as numbers where they read as numbers (a name
    holding `version` keeps its text)."""
    return {k: v if "version" in k else _number(v)
            for k, v in found.groupdict().items() if v is not None}


def _number(text: str) -> int | float | str:
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


@dataclass(frozen=True)
class Quick:
    """Whether any of a marker's patterns can match a message, answered fast: the anchored
    ones in one alternation tried at the start only, the others only when the message holds
    a literal each of them needs (an unanchored alternation is tried at every position)."""

    head: re.Pattern[str] | None
    loose: re.Pattern[str] | None
    needles: tuple[str, ...]
    """Literals the loose patterns need (one each); empty: always search them."""

    def may_match(self, message: str) -> bool:
        """False only when no pattern can match `message`."""
        if self.head is not None and self.head.match(message) is not None:
            return True
        if self.loose is None:
            return False
        if self.needles and not any(n in message for n in self.needles):
            return False
        return self.loose.search(message) is not None


def quick_of(patterns: Sequence[re.Pattern[str]]) -> Quick | None:
    """The `Quick` test of a marker's patterns; None when they cannot share an alternation
    (every line is then tried)."""
    head: list[str] = []
    loose: list[str] = []
    needles: list[str] = []
    always = False
    for pattern in patterns:
        flags, rest = split_flags(pattern.pattern)
        if rest.startswith("^") and anchored(pattern.pattern):
            body = unnamed(rest[1:])
            head.append(f"(?{flags}:{body})" if flags else f"(?:{body})")
            continue
        loose.append(f"(?:{unnamed(pattern.pattern)})")
        literal = needle(pattern.pattern)
        if literal is None:
            always = True
        elif literal not in needles:
            needles.append(literal)
    try:
        return Quick(re.compile("|".join(head)) if head else None,
                     re.compile("|".join(loose)) if loose else None,
                     () if always else tuple(needles))
    except re.error:  # flags or backreferences that cannot share an alternation
        return None
