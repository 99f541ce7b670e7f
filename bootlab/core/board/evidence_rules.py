"""What in a boot log proves a setting's state: a setting's `evidence` rules, as data.

A rule names a line whose presence proves the state (`seen`), or lines whose absence proves it
(`unseen`) once the log shows the part of the boot where they would be (`given`; they are
looked for before the last of those lines): no countdown between U-Boot's banner and
`Starting kernel`. The value (a countdown's
start, lpj) is read from the line: a value the milestone's rule extracted (`value_of`), else a
regular expression's first group over the line as it was first printed (`value`).

Conditions, as written in TOML:

- `milestone:ID`: the milestone on its own line (a fallback's placement does not count)
- `fallback:ID`: the milestone placed by its fallback, because its own line never came
- `stage:NAME`: any milestone of that stage (firmware, bootloader, kernel, userspace)
- `log:REGEX`: a line whose message (without its stamp) matches
- `stamps`: a line carrying a printk time
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from bootlab.core.analysis.bootlog import BootLog
from bootlab.core.analysis.phases import ParsedLine
from bootlab.core.analysis.regex_parse import user_pattern

How = Literal["log", "inferred"]
"""A rule reads what the log shows (`log`) or draws a conclusion from it (`inferred`)."""
_KEYS = ("seen", "unseen", "given", "state", "value_of", "value", "how", "note")
_ID = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Condition:
    """A line to look for in a boot (see the module's docstring for the forms)."""

    kind: Literal["milestone", "fallback", "stage", "log", "stamps"]
    arg: str = ""
    pattern: re.Pattern[str] | None = None

    def find(self, boot: BootLog, before: int | None = None) -> ParsedLine | None:
        """The first line of the boot meeting the condition (before line `before`)."""
        end = len(boot.lines) if before is None or not boot.lines \
            else max(0, before - boot.lines[0].number)
        lines = boot.lines[:end]
        if self.kind in ("milestone", "fallback", "stage"):
            numbers = {m.line for m in boot.milestones
                       if (m.stage == self.arg if self.kind == "stage"
                           else m.id == self.arg and m.fallback == (self.kind == "fallback"))}
            return next((line for line in lines if line.number in numbers), None)
        if self.kind == "stamps":
            return next((line for line in lines if line.kernel_s is not None), None)
        assert self.pattern is not None
        return next((line for line in lines if self.pattern.search(line.message)), None)


@dataclass(frozen=True)
class EvidenceRule:
    """One rule of a setting's `evidence` list."""

    seen: Condition | None
    unseen: tuple[Condition, ...]
    """All must be missing from the log."""
    given: tuple[Condition, ...]
    """unseen: all must be found for the absence to count (it is looked for before the last
    of them); the first is the line quoted."""
    state: bool | None
    """True on, False off; None: on when the value read is the setting's own value."""
    value_of: str | None
    value: re.Pattern[str] | None
    how: How
    note: str
    """Why, in words; `{value}` is replaced by the value read."""

    def apply(self, boot: BootLog) -> tuple[ParsedLine, str | None] | None:
        """The line that decides (and the value it shows), or None when the rule does not."""
        if self.seen is not None:
            line = self.seen.find(boot)
            return None if line is None else (line, self._value(line, boot))
        found = [condition.find(boot) for condition in self.given]
        lines = [line for line in found if line is not None]
        if len(lines) < len(found):
            return None
        last = max(line.number for line in lines)
        if any(condition.find(boot, last) is not None for condition in self.unseen):
            return None
        return lines[0], None

    def _value(self, line: ParsedLine, boot: BootLog) -> str | None:
        if self.value_of is not None and self.seen is not None:
            for milestone in boot.milestones:
                if milestone.line == line.number and milestone.id == self.seen.arg \
                        and self.value_of in milestone.values:
                    return str(milestone.values[self.value_of])
        if self.value is not None:
            match = self.value.search(boot.first_printed(line.number))
            if match is not None:
                return match.group(1)
        return None


def parse_condition(text: Any, fail: Callable[[str], Exception]) -> Condition:
    """A condition from its TOML text.

    Raises:
        the exception `fail` makes: the text is not a known form, or its pattern is bad.
    """
    if not isinstance(text, str):
        raise fail(f"evidence condition {text!r} must be a string")
    if text == "stamps":
        return Condition("stamps")
    kind, _, arg = text.partition(":")
    if kind in ("milestone", "fallback") and _ID.fullmatch(arg):
        return Condition("milestone" if kind == "milestone" else "fallback", arg)
    if kind == "stage" and _ID.fullmatch(arg):
        return Condition("stage", arg)
    if kind == "log" and arg:
        try:
            return Condition("log", arg, user_pattern(arg))
        except re.error as error:
            raise fail(f"bad evidence pattern {arg!r}: {error}") from None
    raise fail(f"evidence condition {text!r} is not milestone:ID, fallback:ID, stage:NAME, "
               "log:REGEX or stamps")


def parse_rules(entries: Any, fail: Callable[[str], Exception]) -> tuple[EvidenceRule, ...]:
    """A setting's `evidence` list (inline tables) as rules.

    Raises:
        the exception `fail` makes, saying what is wrong with which rule.
    """
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise fail("evidence must be a list of tables, e.g. [{ seen = \"stamps\", state = "
                   "\"on\", note = \"...\" }]")
    return tuple(_rule(entry, index, fail) for index, entry in enumerate(entries, 1))


def _conditions(texts: Any, fail: Callable[[str], Exception]) -> tuple[Condition, ...]:
    """One condition or a list of them."""
    return tuple(parse_condition(text, fail)
                 for text in (texts if isinstance(texts, list) else [texts]))


def _rule(entry: dict[str, Any], index: int,
          fail: Callable[[str], Exception]) -> EvidenceRule:
    def bad(reason: str) -> Exception:
        return fail(f"evidence rule {index}: {reason}")

    unknown = [key for key in entry if key not in _KEYS]
    if unknown:
        raise bad(f"unknown key(s) {', '.join(unknown)}; allowed there: {', '.join(_KEYS)}")
    if ("seen" in entry) == ("unseen" in entry):
        raise bad("give either seen or unseen")
    seen = parse_condition(entry["seen"], bad) if "seen" in entry else None
    unseen = _conditions(entry.get("unseen", []), bad)
    given = _conditions(entry.get("given", []), bad)
    if unseen and not given:
        raise bad("unseen needs given: the lines that show the log covers where it would be")
    if seen is not None and given:
        raise bad("given goes with unseen only")
    state = entry.get("state")
    if state not in (None, "on", "off"):
        raise bad("state must be \"on\" or \"off\"")
    value_of, value = entry.get("value_of"), entry.get("value")
    if value_of is not None and (not isinstance(value_of, str) or seen is None
                                 or seen.kind != "milestone"):
        raise bad("value_of names a value of the seen milestone (seen = \"milestone:ID\")")
    pattern = None
    if value is not None:
        if not isinstance(value, str) or seen is None:
            raise bad("value is a pattern read from the seen line")
        try:
            pattern = user_pattern(value)
        except re.error as error:
            raise bad(f"bad value pattern {value!r}: {error}") from None
        if pattern.groups < 1:
            raise bad(f"value pattern {value!r} needs a group: the value read")
    if state is None and value_of is None and pattern is None:
        raise bad("give a state, or a value to compare with the setting's")
    how = entry.get("how", "log")
    if how not in ("log", "inferred"):
        raise bad("how must be \"log\" or \"inferred\"")
    note = entry.get("note")
    if not isinstance(note, str) or not note:
        raise bad("note is missing: say why the line proves it")
    return EvidenceRule(seen, unseen, given, None if state is None else state == "on",
                        value_of, pattern, how, note)
