"""User milestones: a console line marked at the bench becomes a `[[milestone]]` of a profile.

The line's message (its printk or bootloader stamp removed) is turned into an anchored,
bounded pattern in which numbers, hex values and hashes are generalised, so the same line of
the next boot matches although its times, sizes and addresses differ. The milestone is appended
to the user's profile file; when the profile in force is a built-in one, a user file of the same
name that extends it is created (it then replaces the built-in everywhere, CLI included). The
file is loaded back before the change is kept: a mark that would break the profile is undone.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from bootlab.core.analysis.pipeline import parse_line
from bootlab.core.analysis.profiles import STAGES, Marker, Profile, ProfileError, load_profile
from bootlab.core.files.atomic import write_atomic

PREFIX_CHARS = 64
"""The pattern covers at most this many characters of the message (a prefix match)."""
MIN_LITERAL = 3
"""Letters the pattern must keep literally; fewer would match almost any line."""
_TOKEN = re.compile(
    r"(?P<hex>0[xX][0-9a-fA-F]+)"
    r"|(?P<hash>\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b)"
    r"|(?P<digits>\d+)"
    r"|(?P<space>\s+)"
    r"|(?P<other>.)", re.DOTALL)
_GENERAL = {"hex": r"0[xX][0-9a-fA-F]+", "hash": r"[0-9a-fA-F]+", "digits": r"\d+",
            "space": r"\s+"}
ID_WORDS = 3
"""Words of the message that make the milestone id."""


class UserMarkError(ValueError):
    """A line cannot become a milestone (blank, too little fixed text, already a milestone)."""


@dataclass(frozen=True)
class UserMark:
    """A milestone added to a user profile file."""

    marker: Marker
    """The new milestone as loaded back from the file."""
    profile: Profile
    """The whole profile as loaded back (the old milestones and the new one)."""
    path: Path
    """The profile file written."""
    created: bool
    """The file was created (to extend the profile in force)."""


def message_of(raw: bytes) -> str:
    """A line's message as markers see it: cleaned, without its leading stamp."""
    return parse_line(1, raw, None).message


def pattern_for(message: str) -> str:
    """An anchored pattern matching `message` and the same line with other numbers.

    Args:
        message: the cleaned message (see `message_of`).

    Returns:
        A Python regular expression without nested quantifiers.

    Raises:
        UserMarkError: the message is blank or has fewer than MIN_LITERAL fixed letters.
    """
    text = message[:PREFIX_CHARS].rstrip()
    parts = ["^"]
    literal_letters = 0
    for token in _TOKEN.finditer(text):
        kind = token.lastgroup or "other"
        if kind in _GENERAL:
            parts.append(_GENERAL[kind])
        else:
            literal_letters += token.group().isalpha()
            parts.append(re.escape(token.group()))
    if literal_letters < MIN_LITERAL:
        what = "is blank" if not text.strip() else \
            f"{text.strip()!r} has too little fixed text to be recognised again"
        raise UserMarkError(f"the line {what}; choose another line")
    return "".join(parts)


def milestone_id(message: str, taken: Collection[str]) -> str:
    """A lower_snake_case id from the message's first words, not one of `taken`."""
    numbers = r"0[xX][0-9a-fA-F]+|\b[0-9a-fA-F]*\d[0-9a-fA-F]*\b"
    words = [w[:12] for w in re.findall(r"[a-z]+", re.sub(numbers, " ", message.lower()))]
    words = words[:ID_WORDS]
    base = "_".join(words) or "mark"
    ident, number = base, 2
    while ident in taken:
        ident, number = f"{base}_{number}", number + 1
    return ident


def _control(char: str) -> bool:
    return char < " " or char == "\x7f"


def _toml_string(value: str) -> str:
    """A TOML string: plain "...", else literal '...' (patterns: no backslash doubling),
    else basic with escapes."""
    if not any(c in '\\"' or _control(c) for c in value):
        return f'"{value}"'
    if "'" not in value and not any(_control(c) for c in value):
        return f"'{value}'"
    escaped = "".join("\\" + c if c in '\\"' else f"\\u{ord(c):04x}" if _control(c) else c
                      for c in value)
    return f'"{escaped}"'


def milestone_toml(ident: str, title: str, stage: str, pattern: str) -> str:
    """The `[[milestone]]` table for a marked line."""
    return (f"\n[[milestone]]\nid = {_toml_string(ident)}\ntitle = {_toml_string(title)}\n"
            f"stage = {_toml_string(stage)}\nmatch = [{_toml_string(pattern)}]\n")


def user_profile_file(profile: Profile, create_in: Path) -> Path:
    """The file the user's milestones go to: the profile's own file when it is one, else
    `create_in/<name>.toml` (created to extend it)."""
    source = Path(profile.source)
    return source if source.is_file() else create_in / f"{profile.name}.toml"


def add_user_milestone(profile: Profile, raw: bytes, stage: str, create_in: Path,
                       search_dirs: Sequence[Path] = ()) -> UserMark:
    """Make a console line a milestone of the user's profile file.

    Args:
        profile: the profile in force.
        raw: the line's bytes.
        stage: the boot stage the line belongs to (one of STAGES).
        create_in: the user's profile folder, where a file extending a built-in is created.
        search_dirs: the profile folders, to resolve `extends` when loading the file back.

    Returns:
        The milestone and the profile as loaded back from the file.

    Raises:
        UserMarkError: the line cannot be a milestone (or one already matches it).
        ProfileError: the file cannot be read or would not load with the milestone added
            (it is left as it was).
        OSError: the file cannot be written.
    """
    if stage not in STAGES:
        raise UserMarkError(f"stage {stage!r} is not one of {', '.join(STAGES)}")
    message = message_of(raw)
    pattern = pattern_for(message)
    for marker in profile.markers:
        if marker.match(message) is not None:
            raise UserMarkError(f"the line is already milestone {marker.id!r}")
    ident = milestone_id(message, profile.by_id)
    path = user_profile_file(profile, create_in)
    created = not path.is_file()
    if created:
        old_text, mode = None, 0o644
        head = (f"# Milestones marked in bootlab, added to the {profile.name!r} profile.\n"
                f"[profile]\nname = {_toml_string(profile.name)}\n"
                f"extends = {_toml_string(profile.name)}\n")
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        try:
            old_text, mode = path.read_text(encoding="utf-8"), path.stat().st_mode & 0o7777
        except (OSError, UnicodeDecodeError) as error:
            raise ProfileError(str(path), None, f"cannot read profile: {error}") from None
        head = old_text if old_text.endswith("\n") or not old_text else old_text + "\n"
    write_atomic(path, head + milestone_toml(ident, message.strip()[:48], stage, pattern), mode)
    try:
        loaded = load_profile(str(path), search_dirs)
        added = loaded.by_id.get(ident)
        if added is None or added.match(message) is None:
            raise ProfileError(str(path), None, f"milestone {ident!r} did not load back")
    except ProfileError:
        if old_text is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, old_text, mode)
        raise
    return UserMark(added, loaded, path, created)
