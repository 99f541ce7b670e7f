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

    weak = ['^EXT4-fs \\(\\S+\\): mounted']  # lines that hold the milestone's place until a
                                    # `match` line comes in the same boot
    context = ["^reading (?P<load>\\S+)"] # lines before a hit that say what it is about: their
                                    # values join the next hit's
    recheck = ['^Data Size: (?P<bytes>\\d+)']  # a later line that, refused with its context and
                                    # of the milestone's size, shows its line was not it: the
                                    # next hit after it takes its place
    unless = { load = '\\.dtb$' }      # a hit whose value matches is not this milestone ...
    at_least = { bytes = 524288 }   # ... nor one whose value is below this
    ends_boot = false               # the board restarts here: the next line starts a new boot
    merge = false                   # (with extends) add these lines to the milestone of this id
                                    # in the extended profile, instead of replacing it
    shared = false                  # other stages print this line too (it proves no stage)
    late = false                    # firmware the bootloader may start after itself
    repeats = false                 # a new_boot line that may come twice in one boot
    not_before = ["autoboot"]       # a hit before one of these milestones is taken back

    [milestone.fallback]            # when the milestone's own line never comes (e.g. `quiet`)
    after = ["starting_kernel"]     # armed once one of these milestones is reached ...
    skip = ["decompressed"]         # ... and fired by the next line not matching these

Patterns are Python regular expressions matched (with `search`) against the cleaned message,
i.e. the line without its printk or bootloader stamp. Named groups are extracted as values
(`(?P<lpj>\\d+)`), converted to numbers where they read as numbers.

A profile may `include = ["uboot", "tfa", ...]` stage profiles (`kind = "stage"`: one
bootloader's or firmware's lines): their milestones are merged into the profile's own, a
milestone id both name getting the patterns of both, a new one placed after the last milestone
of its stage. `kernel_lines` (in `[profile]`) are patterns for what the kernel prints without a
printk time, so a fallback waiting for user space's first line passes over them.

Users add profiles in the config directory (`bootlab locate profiles`) or in `profiles/` beside
their sessions; a user profile with a built-in's name replaces it, and `extends = "linux"` adds
milestones to a built-in one. Errors name the file, the line and the reason.

Here: the model (`Profile`, `Marker`), parsing and loading. What a marker's patterns make of
a line (hits, the fast reject) is `marker_match`; the built-in files, `profile_files`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from bootlab.core.analysis.marker_match import Hit, Quick, Values, ends_line, hit_values, quick_of
from bootlab.core.analysis.profile_files import builtin_names, builtin_text, profile_header
from bootlab.core.analysis.regex_parse import user_pattern
from bootlab.core.files.errors import (
    LocatedError,
    line_of,
    toml_error_line,
    toml_line,
    unknown_key,
)

STAGES = ("firmware", "bootloader", "kernel", "userspace", "shutdown")
"""Boot stages in order; a milestone's stage orders it against the others."""

_TABLES = ("profile", "milestone")
_PROFILE_KEYS = ("name", "title", "kind", "reference", "extends", "include", "order",
                 "kernel_lines")
_MILESTONE_KEYS = ("id", "title", "stage", "match", "weak", "context", "recheck", "unless",
                   "at_least", "occurrence", "partial", "new_boot", "fail", "ends_boot",
                   "shared", "late", "repeats", "not_before", "fallback", "merge")
_FALLBACK_KEYS = ("after", "skip")


class ProfileError(LocatedError):
    """A profile could not be used; the message says where and why."""


@dataclass(frozen=True)
class Fallback:
    """Where a milestone is placed when its own line never appears."""

    after: tuple[str, ...]
    """The milestones that arm the fallback (any one of them)."""
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
    weak: tuple[re.Pattern[str], ...] = ()
    context: tuple[re.Pattern[str], ...] = ()
    recheck: tuple[re.Pattern[str], ...] = ()
    """Lines that, with their context, may show the milestone's line was something else's: a
    later image header whose size is the load's and whose context `unless` refuses."""
    unless: tuple[tuple[str, re.Pattern[str]], ...] = ()
    """(value name, pattern): a hit whose value matches is not this milestone."""
    at_least: tuple[tuple[str, float], ...] = ()
    """(value name, minimum): a hit whose number is below is not this milestone."""
    ends_boot: bool = False
    shared: bool = False
    """Another stage prints the line too (U-Boot's UBI code, a network driver): reaching it
    does not show that the boot got to this milestone's stage."""
    late: bool = False
    """Firmware the bootloader may start with the kernel (OpenSBI on a TH1520, OP-TEE by
    `bootm` on an i.MX): its banner after the bootloader is the same boot."""
    repeats: bool = False
    """A new_boot line that may come twice in one boot (TI K3's R5 and A53 SPL): seen again
    it starts a boot only after a later stage was reached."""
    not_before: tuple[str, ...] = ()
    """Milestones it never comes before: when one of them is reached after it, its line was
    something else (a read before the autoboot countdown is not the boot command's)."""

    @property
    def stage_index(self) -> int:
        """Position of the stage in STAGES."""
        return STAGES.index(self.stage)

    @property
    def all_patterns(self) -> tuple[re.Pattern[str], ...]:
        """Every pattern whose line the marker must see: match, weak, context and recheck."""
        return self.patterns + self.weak + self.context + self.recheck

    @cached_property
    def quick(self) -> Quick | None:
        """A fast test that rejects a line none of the patterns can match (built when first
        needed: a profile merges many milestones before it matches anything)."""
        return quick_of(self.all_patterns)

    def find(self, message: str, partial: bool = False) -> Hit | None:
        """What `message` is to this marker: a match, a weak match, context, or nothing.

        `partial`: the line is still arriving, so a pattern anchored at the line's end (`$`)
        is not tried: the text's end is not the line's yet ("board login" before its ": ")."""
        if self.quick is not None and not self.quick.may_match(message):
            return None
        for kind, patterns in (("match", self.patterns), ("weak", self.weak),
                               ("context", self.context), ("recheck", self.recheck)):
            for index, pattern in enumerate(patterns):
                if partial and ends_line(pattern.pattern):
                    continue
                found = pattern.search(message)
                if found is not None:
                    return Hit(kind, index, hit_values(found))  # type: ignore[arg-type]
        return None

    def match(self, message: str) -> Values | None:
        """The values a `match` or `weak` pattern extracts from `message`, or None."""
        hit = self.find(message)
        return None if hit is None or hit.kind not in ("match", "weak") else hit.values

    def refuses(self, values: Values) -> str | None:
        """Why a hit with these values is not this milestone (`unless`, `at_least`), or None."""
        for name, pattern in self.unless:
            value = values.get(name)
            if isinstance(value, str) and pattern.search(value):
                return f"{name} {value!r} matches {pattern.pattern!r}"
        for name, least in self.at_least:
            value = values.get(name)
            # 0 is no size: "Read 0 bytes from volume kernel" reads the whole volume
            if isinstance(value, int | float) and 0 < value < least:
                return f"{name} {value:g} is below {least:g}"
        return None


@dataclass(frozen=True)
class Profile:
    """A named, ordered set of milestone markers."""

    name: str
    title: str
    markers: tuple[Marker, ...]
    reference: str = "first-byte"
    source: str = "<built-in>"
    kind: str = "boot"
    """"boot" (a whole boot) or "stage" (one bootloader's or firmware's lines, included)."""
    kernel_lines: tuple[re.Pattern[str], ...] = ()
    """What the kernel prints without a printk time (fallbacks for user space skip it)."""
    by_id: dict[str, Marker] = field(init=False, repr=False, compare=False)

    order: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {m.id: m for m in self.markers})
        object.__setattr__(self, "order", {m.id: i for i, m in enumerate(self.markers)})

    def kernel_line(self, message: str) -> bool:
        """Whether a line without a printk time reads as the kernel's own."""
        return any(pattern.search(message) for pattern in self.kernel_lines)


def parse_profile(text: str, source: str = "<string>", base: Profile | None = None,
                  parts: Sequence[Profile] = ()) -> Profile:
    """Build a profile from TOML text.

    Args:
        text: the TOML document.
        source: where it came from, for error messages.
        base: the profile named by `extends`, already loaded.
        parts: the profiles named by `include`, already loaded, in order.

    Returns:
        The profile.

    Raises:
        ProfileError: the TOML is malformed or a milestone is invalid.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(source, toml_error_line(error), f"not valid TOML: {error}") from None
    _check_keys(data, text, source)
    head = data.get("profile", {})
    if not isinstance(head, dict):
        raise ProfileError(source, line_of(text, "profile"), "[profile] must be a table")
    name = head.get("name") or re.sub(r"[^A-Za-z0-9_.-]", "", Path(source).stem) or "custom"
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ProfileError(source, line_of(text, "name"), f"bad profile name {name!r}")
    kind = head.get("kind", "boot")
    if kind not in ("boot", "stage"):
        raise ProfileError(source, line_of(text, "kind"), 'kind must be "boot" or "stage"')
    entries = data.get("milestone", [])
    if not isinstance(entries, list):
        raise ProfileError(source, line_of(text, "milestone"),
                           "milestones must be written as [[milestone]] tables")
    markers: list[Marker] = list(base.markers) if base else []
    lines: dict[str, int | None] = {}
    seen_line = 1
    for entry in entries:
        ident = entry.get("id") if isinstance(entry, dict) else None
        line = line_of(text, f'"{ident}"', seen_line) if isinstance(ident, str) else None
        seen_line = line or seen_line
        merge = isinstance(entry, dict) and entry.get("merge", False)
        if not isinstance(merge, bool):
            raise ProfileError(source, line, f"{ident}: merge must be true or false")
        same = next((m for m in markers if m.id == ident), None)
        if merge and same is None:
            raise ProfileError(source, line, f"{ident}: merge = true, but the extended profile "
                                             "has no milestone with this id")
        marker = _marker({**entry, "stage": same.stage} if merge and same else entry,
                         source, line, bool(parts) or merge)
        lines[marker.id] = line
        if merge and same is not None:
            markers = _merged(markers, replace(marker, **{k: getattr(same, k) for k in _FLAGS}),
                              source, line, source)
        elif same is not None:
            markers = [marker if m.id == marker.id else m for m in markers]
        else:
            markers.append(marker)
    kernel_lines = [*(base.kernel_lines if base else ())]
    for part in parts:
        for marker in part.markers:
            markers = _merged(markers, marker, source, lines.get(marker.id), part.source)
        kernel_lines += part.kernel_lines
    order = head.get("order", [])
    if not isinstance(order, list) or not all(isinstance(i, str) for i in order):
        raise ProfileError(source, line_of(text, "order"), "order must be a list of milestone ids")
    markers = _ordered(markers, order, source, line_of(text, "order"))
    for marker in markers:
        if not marker.patterns and not marker.weak:
            raise ProfileError(source, lines.get(marker.id),
                               f"{marker.id}: 'match' must be a pattern or a list of them")
    _check_value_names(entries, {m.id: m for m in markers}, text, source)
    kernel_lines += _patterns(head.get("kernel_lines", []), "kernel_lines", source,
                              line_of(text, "kernel_lines"))
    known = {m.id for m in markers}
    for marker in markers:
        for ref in marker.not_before:
            if ref not in known:
                raise ProfileError(source, line_of(text, f'"{ref}"'),
                                   f"milestone {marker.id!r}: not_before names unknown "
                                   f"milestone {ref!r}")
        if marker.fallback:
            for ref in (*marker.fallback.after, *marker.fallback.skip):
                if ref not in known:
                    raise ProfileError(source, line_of(text, f'"{ref}"'),
                                       f"milestone {marker.id!r}: fallback names unknown "
                                       f"milestone {ref!r}")
    reference = head.get("reference", base.reference if base else "first-byte")
    if reference != "first-byte" and reference not in known:
        raise ProfileError(source, line_of(text, "reference"),
                           f"reference {reference!r} is neither 'first-byte' nor a milestone id")
    return Profile(name, str(head.get("title", name)), tuple(markers), reference, source, kind,
                   tuple(kernel_lines))


def _check_keys(data: dict[str, Any], text: str, source: str) -> None:
    """Refuse any table or key the format does not know, at every level, at its line: a key
    written in the wrong table would otherwise be dropped without a word (`name` above
    [profile] leaves a profile that finds nothing).

    Raises:
        ProfileError: the first unknown key: where it is, and what is allowed there.
    """
    key = unknown_key(data, _TABLES)
    if key is not None:
        home = "[profile]" if key in _PROFILE_KEYS else \
            "a [[milestone]]" if key in _MILESTONE_KEYS else None
        hint = f"; write it under {home}" if home else ""
        raise ProfileError(source, toml_line(text, (key,)),
                           f"unknown key {key!r} at the top level: a profile holds only the "
                           f"tables [profile] and [[milestone]]{hint}")
    head = data.get("profile")
    if isinstance(head, dict) and (key := unknown_key(head, _PROFILE_KEYS)) is not None:
        raise ProfileError(source, toml_line(text, ("profile", key)),
                           f"unknown key {key!r} in [profile]; allowed there: "
                           f"{', '.join(_PROFILE_KEYS)}")
    entries = data.get("milestone")
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue
        name = f"[[milestone]] {entry['id']!r}" if isinstance(entry.get("id"), str) \
            else "[[milestone]]"
        key = unknown_key(entry, _MILESTONE_KEYS)
        if key is not None:
            raise ProfileError(source, toml_line(text, ("milestone", index, key)),
                               f"unknown key {key!r} in {name}; allowed there: "
                               f"{', '.join(_MILESTONE_KEYS)}")
        spec = entry.get("fallback")
        if isinstance(spec, dict) and (key := unknown_key(spec, _FALLBACK_KEYS)) is not None:
            raise ProfileError(source, toml_line(text, ("milestone", index, "fallback", key)),
                               f"unknown key {key!r} in the fallback of {name}; allowed "
                               f"there: {', '.join(_FALLBACK_KEYS)}")


def _check_value_names(entries: list[dict[str, Any]], markers: dict[str, Marker], text: str,
                       source: str) -> None:
    """Refuse an `unless` or `at_least` key that names no value of its milestone's patterns
    (all of them, included and merged ones too): a misspelt name would never refuse a hit.

    Raises:
        ProfileError: at the name's line, with the names the patterns extract.
    """
    for index, entry in enumerate(entries):
        marker = markers[entry["id"]]
        names = sorted({name for pattern in marker.all_patterns for name in pattern.groupindex})
        for key in ("unless", "at_least"):
            for name in entry.get(key, {}):
                if name not in names:
                    known = f"its patterns extract {', '.join(names)}" if names else \
                        "its patterns extract no values: name them with (?P<name>...)"
                    raise ProfileError(source, toml_line(text, ("milestone", index, key, name)),
                                       f"{marker.id}: {key} names the value {name!r}, which no "
                                       f"pattern of the milestone extracts; {known}")


_FLAGS = ("stage", "occurrence", "partial", "new_boot", "fail", "ends_boot", "shared", "late",
          "repeats")
"""What milestones merged into one must agree on."""


def _merged(markers: list[Marker], marker: Marker, source: str, line: int | None,
            part: str) -> list[Marker]:
    """`markers` with an included milestone merged in: an id already there gets its patterns
    (its title, stage and flags must agree); a new one goes after the last milestone of its
    stage."""
    for index, known in enumerate(markers):
        if known.id != marker.id:
            continue
        for key in _FLAGS:
            if getattr(known, key) != getattr(marker, key):
                raise ProfileError(source, line, f"{marker.id}: {key} is "
                                                 f"{getattr(known, key)!r} here but "
                                                 f"{getattr(marker, key)!r} in {part}")
        joined = replace(
            known, patterns=_union(known.patterns, marker.patterns),
            weak=_union(known.weak, marker.weak), context=_union(known.context, marker.context),
            recheck=_union(known.recheck, marker.recheck), unless=known.unless + marker.unless,
            at_least=known.at_least + marker.at_least,
            not_before=tuple(dict.fromkeys(known.not_before + marker.not_before)))
        return [*markers[:index], joined, *markers[index + 1:]]
    return _placed(markers, marker)


def _union(first: tuple[re.Pattern[str], ...],
           second: tuple[re.Pattern[str], ...]) -> tuple[re.Pattern[str], ...]:
    """Both pattern lists, a pattern already in the first left out of the second."""
    seen = {p.pattern for p in first}
    return first + tuple(p for p in second if p.pattern not in seen)


def _placed(markers: list[Marker], marker: Marker) -> list[Marker]:
    """`markers` with `marker` after the last milestone of its stage (or before the first of a
    later stage)."""
    at = len(markers)
    for index, known in enumerate(markers):
        if known.stage_index > marker.stage_index:
            at = index
            break
    return [*markers[:at], marker, *markers[at:]]


def _ordered(markers: list[Marker], order: list[str], source: str,
             line: int | None) -> list[Marker]:
    """The milestones named in `order` first, in that order; the others placed by stage (no
    `order`: as they are)."""
    if not order:
        return markers
    by_id = {m.id: m for m in markers}
    unknown = [ident for ident in order if ident not in by_id]
    if unknown:
        raise ProfileError(source, line, f"order names unknown milestone(s) {', '.join(unknown)}")
    result = [by_id[ident] for ident in order]
    for marker in markers:
        if marker.id not in order:
            result = _placed(result, marker)
    return result


def _patterns(raw: Any, what: str, source: str, line: int | None) -> list[re.Pattern[str]]:
    """Compile a pattern or a list of them from a profile (checked by `user_pattern`)."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise ProfileError(source, line, f"'{what}' must be a pattern or a list of them")
    compiled = []
    for text in raw:
        try:
            compiled.append(user_pattern(text))
        except re.error as error:
            raise ProfileError(source, line, f"bad pattern {text!r}: {error}") from None
    return compiled


def _marker(entry: Any, source: str, line: int | None, included: bool = False) -> Marker:
    """One [[milestone]] table; `included`: the profile includes others, which may give the
    patterns of a milestone that names none here."""
    if not isinstance(entry, dict):
        raise ProfileError(source, line, "each [[milestone]] must be a table")
    ident = entry.get("id")
    if not isinstance(ident, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", ident):
        raise ProfileError(source, line, f"milestone id {ident!r} must be lower_snake_case")
    stage = entry.get("stage", "kernel")
    if stage not in STAGES:
        raise ProfileError(source, line, f"{ident}: stage {stage!r} is not one of {STAGES}")
    kinds: dict[str, list[re.Pattern[str]]] = {}
    for key in ("match", "weak", "context", "recheck"):
        try:
            kinds[key] = _patterns(entry.get(key, []), key, source, line)
        except ProfileError as error:
            raise ProfileError(source, line, f"{ident}: {error.reason}") from None
    if "match" not in entry and "weak" not in entry and not included:
        raise ProfileError(source, line, f"{ident}: 'match' must be a pattern or a list of them")
    occurrence = entry.get("occurrence", "first")
    if occurrence not in ("first", "last", "every"):
        raise ProfileError(source, line,
                           f"{ident}: occurrence must be \"first\", \"last\" or \"every\"")
    flags = {}
    for key in ("partial", "new_boot", "fail", "ends_boot", "shared", "late", "repeats"):
        value = entry.get(key, False)
        if not isinstance(value, bool):
            raise ProfileError(source, line, f"{ident}: {key} must be true or false")
        flags[key] = value
    fallback = None
    if "fallback" in entry:
        spec = entry["fallback"]
        after = spec.get("after") if isinstance(spec, dict) else None
        after = [after] if isinstance(after, str) else after
        if not isinstance(after, list) or not after or \
                not all(isinstance(a, str) for a in after):
            raise ProfileError(source, line, f"{ident}: fallback needs after = \"<milestone id>\" "
                                             "or a list of them")
        skip = spec.get("skip", [])
        if not isinstance(skip, list) or not all(isinstance(s, str) for s in skip):
            raise ProfileError(source, line, f"{ident}: fallback skip must be a list of ids")
        fallback = Fallback(tuple(after), tuple(skip))
    unless = entry.get("unless", {})
    if not isinstance(unless, dict) or not all(isinstance(v, str) for v in unless.values()):
        raise ProfileError(source, line, f"{ident}: unless must be a table of value = pattern")
    try:
        refusals = tuple((key, user_pattern(value)) for key, value in unless.items())
    except re.error as error:
        raise ProfileError(source, line, f"{ident}: bad unless pattern: {error}") from None
    not_before = entry.get("not_before", [])
    if not isinstance(not_before, list) or not all(isinstance(i, str) for i in not_before):
        raise ProfileError(source, line, f"{ident}: not_before must be a list of milestone ids")
    at_least = entry.get("at_least", {})
    if not isinstance(at_least, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in at_least.values()):
        raise ProfileError(source, line, f"{ident}: at_least must be a table of value = number")
    title = entry.get("title", ident)
    return Marker(ident, str(title), stage, tuple(kinds["match"]), occurrence, fallback=fallback,
                  weak=tuple(kinds["weak"]), context=tuple(kinds["context"]),
                  recheck=tuple(kinds["recheck"]), unless=refusals,
                  not_before=tuple(not_before),
                  at_least=tuple((k, float(v)) for k, v in at_least.items()), **flags)


def load_profile(name_or_path: str, search_dirs: Sequence[Path] = (),
                 _seen: Iterable[str] = ()) -> Profile:
    """Find and load a profile by file path or by name.

    A name is looked up as NAME.toml in `search_dirs` (first hit wins), then among the built-ins.
    The profiles it `extends` and `include`s are found the same way.

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
            text = builtin_text(name_or_path)
            source = f"<built-in {name_or_path}>"
    if text is None:
        choices = ", ".join(builtin_names())
        raise ProfileError(name_or_path, None,
                           f"no such profile (built-in: {choices}; or give a .toml path)")
    head = profile_header(text)
    base = None
    extends = head.get("extends")
    if isinstance(extends, str):
        base = _load_named(extends, "extends", text, source, search_dirs, _seen)
    include = head.get("include", [])
    if not isinstance(include, list) or not all(isinstance(n, str) for n in include):
        raise ProfileError(source, line_of(text, "include"),
                           "include must be a list of profile names")
    parts = [_load_named(name, "include", text, source, search_dirs, _seen) for name in include]
    return parse_profile(text, source, base, parts)


def _load_named(name: str, key: str, text: str, source: str, search_dirs: Sequence[Path],
                seen: Iterable[str]) -> Profile:
    """A profile that `source` names in `extends` or `include` (a loop is an error)."""
    if name in seen:
        raise ProfileError(source, line_of(text, key), f"{key} loop via {name!r}")
    dirs = [d for d in search_dirs if str(d / f"{name}.toml") != source]
    return load_profile(name, dirs, (*seen, name))
