"""Marker profiles: which lines mark which boot milestones, read from TOML.

A profile file looks like this (the built-ins live in `bootlab/profiles/`):

    [profile]
    name = "linux"
    title = "Bootloader + Linux"
    reference = "first-byte"        # or a milestone id: elapsed times count from it

    [[milestone]]
    id = "starting_kernel"
    title = "Starting kernel"
    stage = "bootloader"            # firmware | bootloader | kernel | userspace
    match = ['^Starting kernel \\.\\.\\.']
    occurrence = "first"            # "first", "last" (later hits move it until a milestone
                                    # further down the profile is reached) or "every"
    partial = false                 # also try the line while it is still arriving (prompts)
    new_boot = false                # seeing it again (or after a later stage) starts a new boot
    fail = false                    # the boot failed here (panic)

    [milestone.fallback]            # when the milestone's own line never comes (e.g. `quiet`)
    after = "starting_kernel"       # armed once this milestone is reached ...
    skip = ["decompressed"]         # ... and fired by the next line not matching these

Patterns are Python regular expressions matched (with `search`) against the cleaned message,
i.e. the line without its printk or bootloader stamp. Named groups are extracted as values
(`(?P<lpj>\\d+)`), converted to numbers where they read as numbers.

Users add profiles in the config directory (`bootlab locate profiles`) or in `profiles/` beside
their sessions; a user profile with a built-in's name replaces it, and `extends = "linux"` adds
milestones to a built-in one. Errors name the file, the line and the reason.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from bootlab.core.errors import LocatedError, line_of, toml_error_line
from bootlab.core.prefilter import unnamed

STAGES = ("firmware", "bootloader", "kernel", "userspace")
"""Boot stages in order; a milestone's stage orders it against the others."""


class ProfileError(LocatedError):
    """A profile could not be used; the message says where and why."""


@dataclass(frozen=True)
class Fallback:
    """Where a milestone is placed when its own line never appears."""

    after: str
    """The milestone that arms the fallback."""
    skip: tuple[str, ...] = ()
    """Milestones whose lines neither fire nor cancel the fallback."""


@dataclass(frozen=True)
class Marker:
    """One milestone definition."""

    id: str
    title: str
    stage: str
    patterns: tuple[re.Pattern[str], ...]
    occurrence: str = "first"
    partial: bool = False
    new_boot: bool = False
    fail: bool = False
    fallback: Fallback | None = None

    @property
    def stage_index(self) -> int:
        """Position of the stage in STAGES."""
        return STAGES.index(self.stage)

    quick: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    """All patterns in one alternation: one search rejects a non-matching line."""

    def match(self, message: str) -> dict[str, int | float | str] | None:
        """Return the values extracted from `message`, or None when no pattern matches."""
        if self.quick is not None and self.quick.search(message) is None:
            return None
        for pattern in self.patterns:
            found = pattern.search(message)
            if found is not None:
                return {k: v if "version" in k else _number(v)
                        for k, v in found.groupdict().items() if v is not None}
        return None


@dataclass(frozen=True)
class Profile:
    """A named, ordered set of milestone markers."""

    name: str
    title: str
    markers: tuple[Marker, ...]
    reference: str = "first-byte"
    source: str = "<built-in>"
    by_id: dict[str, Marker] = field(init=False, repr=False, compare=False)

    order: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {m.id: m for m in self.markers})
        object.__setattr__(self, "order", {m.id: i for i, m in enumerate(self.markers)})


def _number(text: str) -> int | float | str:
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def parse_profile(text: str, source: str = "<string>",
                  base: Profile | None = None) -> Profile:
    """Build a profile from TOML text.

    Args:
        text: the TOML document.
        source: where it came from, for error messages.
        base: the profile named by `extends`, already loaded.

    Returns:
        The profile.

    Raises:
        ProfileError: the TOML is malformed or a milestone is invalid.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(source, toml_error_line(error), f"not valid TOML: {error}") from None
    head = data.get("profile", {})
    if not isinstance(head, dict):
        raise ProfileError(source, line_of(text, "profile"), "[profile] must be a table")
    name = head.get("name") or re.sub(r"[^A-Za-z0-9_.-]", "", Path(source).stem) or "custom"
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ProfileError(source, line_of(text, "name"), f"bad profile name {name!r}")
    entries = data.get("milestone", [])
    if not isinstance(entries, list):
        raise ProfileError(source, line_of(text, "milestone"),
                           "milestones must be written as [[milestone]] tables")
    markers: list[Marker] = list(base.markers) if base else []
    seen_line = 1
    for entry in entries:
        ident = entry.get("id") if isinstance(entry, dict) else None
        line = line_of(text, f'"{ident}"', seen_line) if isinstance(ident, str) else None
        seen_line = line or seen_line
        marker = _marker(entry, source, line)
        if any(m.id == marker.id for m in markers):
            markers = [marker if m.id == marker.id else m for m in markers]
        else:
            markers.append(marker)
    known = {m.id for m in markers}
    for marker in markers:
        if marker.fallback:
            for ref in (marker.fallback.after, *marker.fallback.skip):
                if ref not in known:
                    raise ProfileError(source, line_of(text, f'"{ref}"'),
                                       f"milestone {marker.id!r}: fallback names unknown "
                                       f"milestone {ref!r}")
    reference = head.get("reference", base.reference if base else "first-byte")
    if reference != "first-byte" and reference not in known:
        raise ProfileError(source, line_of(text, "reference"),
                           f"reference {reference!r} is neither 'first-byte' nor a milestone id")
    return Profile(name, str(head.get("title", name)), tuple(markers), reference, source)


def _marker(entry: Any, source: str, line: int | None) -> Marker:
    if not isinstance(entry, dict):
        raise ProfileError(source, line, "each [[milestone]] must be a table")
    unknown = set(entry) - {"id", "title", "stage", "match", "occurrence", "partial",
                            "new_boot", "fail", "fallback"}
    if unknown:
        raise ProfileError(source, line, f"unknown key(s) {', '.join(sorted(unknown))}")
    ident = entry.get("id")
    if not isinstance(ident, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", ident):
        raise ProfileError(source, line, f"milestone id {ident!r} must be lower_snake_case")
    stage = entry.get("stage", "kernel")
    if stage not in STAGES:
        raise ProfileError(source, line, f"{ident}: stage {stage!r} is not one of {STAGES}")
    raw_patterns = entry.get("match")
    if isinstance(raw_patterns, str):
        raw_patterns = [raw_patterns]
    if not raw_patterns or not all(isinstance(p, str) for p in raw_patterns):
        raise ProfileError(source, line, f"{ident}: 'match' must be a pattern or a list of them")
    patterns = []
    for raw in raw_patterns:
        try:
            patterns.append(user_pattern(raw))
        except re.error as error:
            raise ProfileError(source, line, f"{ident}: bad pattern {raw!r}: {error}") from None
    occurrence = entry.get("occurrence", "first")
    if occurrence not in ("first", "last", "every"):
        raise ProfileError(source, line,
                           f"{ident}: occurrence must be \"first\", \"last\" or \"every\"")
    flags = {}
    for key in ("partial", "new_boot", "fail"):
        value = entry.get(key, False)
        if not isinstance(value, bool):
            raise ProfileError(source, line, f"{ident}: {key} must be true or false")
        flags[key] = value
    fallback = None
    if "fallback" in entry:
        spec = entry["fallback"]
        if not isinstance(spec, dict) or not isinstance(spec.get("after"), str):
            raise ProfileError(source, line, f"{ident}: fallback needs after = \"<milestone id>\"")
        skip = spec.get("skip", [])
        if not isinstance(skip, list) or not all(isinstance(s, str) for s in skip):
            raise ProfileError(source, line, f"{ident}: fallback skip must be a list of ids")
        fallback = Fallback(spec["after"], tuple(skip))
    title = entry.get("title", ident)
    try:
        quick: re.Pattern[str] | None = re.compile(
            "|".join(f"(?:{unnamed(p.pattern)})" for p in patterns))
    except re.error:  # flags or backreferences that cannot share an alternation
        quick = None
    return Marker(ident, str(title), stage, tuple(patterns), occurrence, fallback=fallback,
                  quick=quick, **flags)


_sre: Any = importlib.import_module("re._parser")
"""The stdlib's regular expression parser, to look at a user pattern's structure."""
_WIDE_REPEAT = 32
"""A repetition allowing this many or more is treated as unbounded."""
_ALPHABET = [chr(c) for c in range(256)]
_CATEGORIES = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
               "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}
Chars = frozenset[str]


def user_pattern(raw: str) -> re.Pattern[str]:
    """Compile a pattern from a user's file, refusing the forms that backtrack exponentially:
    an unbounded repetition inside another with nothing mandatory between the inner ones that
    they cannot match themselves, such as `(a+)+`, `(\\w+\\s?)*` or `(.+,)*` (`(\\d+\\.)+`
    is fine). On a line that almost matches such a pattern runs for minutes, and board output
    decides the lines. A heuristic for the common forms, not a proof.

    Raises:
        re.error: the pattern is invalid, or has such a repetition.
    """
    compiled = re.compile(raw)
    parsed = _sre.parse(raw)
    if _risky(parsed, bool(parsed.state.flags & re.IGNORECASE)):
        raise re.error("a repetition inside a repetition with nothing that separates the inner "
                       "ones (like (a+)+ or (\\w+\\s?)*) can take exponential time on a device "
                       "line; repeat only one of them, separate them by a character the inner "
                       "one cannot match, or make it atomic: (?>a+)+")
    return compiled


def _risky(items: Any, nocase: bool) -> bool:
    """Whether a parsed pattern repeats, unbounded, a body that can split a text many ways."""
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            _, high, body = arg
            wide = high == _sre.MAXREPEAT or high >= _WIDE_REPEAT
            if (wide and _ambiguous(body, nocase)) or _risky(body, nocase):
                return True
        elif any(_risky(part, nocase) for part in _parts(name, arg)):
            return True
    return False


_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


def _ambiguous(body: Any, nocase: bool) -> bool:
    """Whether a repeated body holds an unbounded repetition whose end is not fixed: the next
    mandatory thing after it (wrapping round to the next time round the body) shares
    characters with it, as does anything optional in between."""
    elements: list[tuple[Chars | None, bool, bool]] = []  # characters, unbounded, mandatory
    for op, arg in _flat(body):
        name = str(op)
        if name in _ZERO_WIDTH:
            continue
        if name == "ATOMIC_GROUP":  # never backtracked into: it fixes where things end
            elements.append((frozenset(), False, True))
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, sub = arg
            wide = high == _sre.MAXREPEAT or high >= _WIDE_REPEAT
            elements.append((_chars(list(sub), nocase), wide, low > 0))
        elif name == "BRANCH":
            elements.append(_branch(arg[1], nocase))
        else:
            wide = any(_repeats(part) for part in _parts(name, arg))
            elements.append((None if wide else _chars([(op, arg)], nocase), wide, True))
    count = len(elements)
    for index, (chars, wide, _) in enumerate(elements):
        if not wide:
            continue
        if chars is None:
            return True  # an unbounded repetition of something longer: assume the worst
        for step in range(1, count + 1):
            after, _, mandatory = elements[(index + step) % count]
            if after is None or after & chars:
                return True
            if mandatory:
                break
    return False


def _branch(alternatives: list[Any], nocase: bool) -> tuple[Chars | None, bool, bool]:
    """A branch as an element of a repeated body: (characters, unbounded, mandatory).

    Alternatives that can start alike, or an empty one, let a repetition split a text in
    several ways (`(a|aa)+`): such a branch counts as an unbounded repetition of every
    character in it; one holding a repetition, as one of unknown characters."""
    if any(_repeats(alternative) for alternative in alternatives):
        return None, True, True
    starts: list[Chars] = []
    every: set[str] = set()
    for alternative in alternatives:
        items = [item for item in alternative if str(item[0]) not in _ZERO_WIDTH]
        sets = [_chars([item], nocase) for item in items]
        if any(chars is None for chars in sets):
            return None, True, True
        every.update(*(chars for chars in sets if chars is not None))
        if sets and sets[0] is not None:
            starts.append(sets[0])
    empty = len(starts) < len(alternatives)
    overlap = any(a & b for i, a in enumerate(starts) for b in starts[i + 1:])
    return frozenset(every), empty or overlap, not empty


def _flat(items: Any) -> list[Any]:
    """The items of a sequence, with plain groups opened up."""
    out: list[Any] = []
    for op, arg in items:
        out += _flat(arg[3]) if str(op) == "SUBPATTERN" else [(op, arg)]
    return out


def _repeats(items: Any) -> bool:
    """Whether a parsed pattern holds an unbounded repetition anywhere."""
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT") and (arg[1] == _sre.MAXREPEAT
                                                     or arg[1] >= _WIDE_REPEAT):
            return True
        if any(_repeats(part) for part in _parts(name, arg)) or (
                name in ("MAX_REPEAT", "MIN_REPEAT") and _repeats(arg[2])):
            return True
    return False


def _chars(items: list[Any], nocase: bool) -> Chars | None:
    """The characters (of the first 256) one single-character item matches; None otherwise."""
    if len(items) != 1:
        return None
    op, arg = items[0]
    name = str(op)
    if name == "LITERAL":
        found = {chr(arg)}
    elif name == "NOT_LITERAL":
        found = {ch for ch in _ALPHABET if ch != chr(arg)}
    elif name == "ANY":
        found = set(_ALPHABET) - {"\n"}
    elif name == "CATEGORY" and str(arg) in _CATEGORIES:
        found = {ch for ch in _ALPHABET if re.match(_CATEGORIES[str(arg)], ch)}
    elif name == "IN":
        found = _set_members(arg)
    else:
        return None
    if nocase:
        found |= {ch.swapcase() for ch in found}
    return frozenset(found)


def _set_members(members: Any) -> set[str]:
    found: set[str] = set()
    negate = False
    for op, arg in members:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            found.add(chr(arg))
        elif name == "RANGE":
            found |= {chr(c) for c in range(arg[0], min(arg[1], 255) + 1)}
        elif name == "CATEGORY" and str(arg) in _CATEGORIES:
            found |= {ch for ch in _ALPHABET if re.match(_CATEGORIES[str(arg)], ch)}
        else:
            found |= set(_ALPHABET)  # unknown member: assume it overlaps everything
    return set(_ALPHABET) - found if negate else found


def _parts(name: str, arg: Any) -> list[Any]:
    """The sub-patterns of a parsed group, branch, lookaround or conditional."""
    if name == "SUBPATTERN":
        return [arg[3]]
    if name == "ATOMIC_GROUP":
        return [arg]
    if name == "BRANCH":
        return list(arg[1])
    if name in ("ASSERT", "ASSERT_NOT"):
        return [arg[1]]
    if name == "GROUPREF_EXISTS":
        return [part for part in arg[1:] if part is not None]
    return []


def builtin_names() -> list[str]:
    """Names of the profiles shipped with bootlab."""
    folder = resources.files("bootlab") / "profiles"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def _builtin_text(name: str) -> str | None:
    path = resources.files("bootlab") / "profiles" / f"{name}.toml"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def load_profile(name_or_path: str, search_dirs: Sequence[Path] = (),
                 _seen: Iterable[str] = ()) -> Profile:
    """Find and load a profile by file path or by name.

    A name is looked up as NAME.toml in `search_dirs` (first hit wins), then among the built-ins.

    Raises:
        ProfileError: not found, or invalid.
    """
    candidate = Path(name_or_path)
    text: str | None = None
    source = name_or_path
    if candidate.suffix == ".toml" or "/" in name_or_path:
        try:
            text = candidate.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ProfileError(name_or_path, None, f"cannot read profile: {error}") from None
    else:
        for folder in search_dirs:
            path = folder / f"{name_or_path}.toml"
            if path.is_file():
                source = str(path)
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as error:
                    raise ProfileError(source, None, f"cannot read profile: {error}") from None
                break
        if text is None:
            text = _builtin_text(name_or_path)
            source = f"<built-in {name_or_path}>"
    if text is None:
        choices = ", ".join(builtin_names())
        raise ProfileError(name_or_path, None,
                           f"no such profile (built-in: {choices}; or give a .toml path)")
    base = None
    try:
        extends = tomllib.loads(text).get("profile", {}).get("extends")
    except (tomllib.TOMLDecodeError, AttributeError):
        extends = None
    if isinstance(extends, str):
        if extends in _seen:
            raise ProfileError(source, line_of(text, "extends"), f"extends loop via {extends!r}")
        dirs = [d for d in search_dirs if str(d / f"{extends}.toml") != source]
        base = load_profile(extends, dirs, (*_seen, extends))
    return parse_profile(text, source, base)
