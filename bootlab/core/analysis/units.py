"""User space as systemd prints it: each unit's start and readiness, from its status lines.

systemd writes a status line to the console as a unit changes state (`         Starting
NAME - Description...`, `[  OK  ] Started NAME - Description.`, `[  OK  ] Reached target
NAME - Description.`, `[FAILED] Failed to start NAME ...`), and before its journal is up it logs
the same events to the kernel's log (`systemd[1]: Started NAME - ...`). Each is read here into
one step per unit: when it began (its `Starting`/`Mounting` line) and when it was ready (its
`OK` line), on the session's host clock. A unit is also a goal (`unit:NAME`): its first line
showing it active is the milestone `unit:NAME` (`unit_marker`).

The console cuts long lines to its width in the middle of the name (`system-modpr…lice`): such
a name joins a unit only where its head and tail agree with exactly one (`same_unit`), else it
stays as shown; a goal never takes a cut name for its unit. A systemd printing descriptions
only (`StatusUnitFormat=description`, before version 251) shows no names: its steps are keyed
by description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bootlab.core.analysis.clocks import boot_lines
from bootlab.core.analysis.phases import ParsedLine
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.analysis.profiles import Marker
from bootlab.core.capture.sources import Source

if TYPE_CHECKING:
    from bootlab.core.analysis.goals import Goal

UNIT_PREFIX = "unit:"
"""A goal or milestone id naming a systemd unit: `unit:multi-user.target`."""
UNIT_NAME = re.compile(
    r"[A-Za-z0-9:_.\\@-]+\.(?:service|target|mount|socket|path|timer|slice|swap|automount|"
    r"device|scope)")
MATCH_CHARS = 8
"""Characters a cut name's head and tail must keep to be matched with another cut form."""
_CUT_ESCAPE = re.compile(r"\[[0-9;]*m")
"""A colour sequence the console's cut left without its ESC (`modprobe@dm_mod.s…[0m`)."""
_READY = ("Started", "Finished", "Reached target", "Mounted", "Listening on", "Created slice",
          "Set up automount", "Activated swap")
_BEGIN = ("Starting", "Mounting", "Activating swap")
_FAILED = ("Failed to start", "Failed to mount", "Dependency failed for", "Failed to listen on")
_VERB = r"(?P<verb>{})"
_STATUS = re.compile(r"^\[\s*(?P<status>OK|FAILED|DEPEND|TIME)\s*\] " +
                     _VERB.format("|".join(map(re.escape, _READY + _FAILED))) +
                     r" (?P<what>.+?)\.?$")
_KMSG = re.compile(r"^systemd\[1\]: " + _VERB.format("|".join(map(re.escape, _READY + _FAILED)))
                   + r" (?P<what>.+?)\.?$")
_STARTING = re.compile(r"^(?:\s+|systemd\[1\]: )" + _VERB.format("|".join(_BEGIN)) +
                       r" (?P<what>.+?)\.\.\.$")


def took(began_s: float | None, ready_s: float | None) -> float | None:
    """A unit's time from start to readiness (None unless both are known)."""
    return None if began_s is None or ready_s is None else ready_s - began_s


@dataclass
class UnitStep:
    """One unit of a boot as its status lines show it."""

    name: str
    """The unit's name as shown (`systemd-udevd.service`; cut with `…` on a narrow console),
    or its description where systemd prints no names."""
    description: str
    began_s: float | None = None
    """Host time of its `Starting` line (None: not shown, as for targets and slices)."""
    ready_s: float | None = None
    """Host time of the first line showing it active (None: it never was)."""
    began_line: int | None = None
    ready_line: int | None = None
    failed: bool = False
    kind: str = ""
    """The verb that made it ready: Started, Finished, Reached target, Mounted, ..."""

    @property
    def took_s(self) -> float | None:
        """From its start to its readiness (None unless both were shown)."""
        return took(self.began_s, self.ready_s)

    @property
    def unit_type(self) -> str:
        """`service`, `target`, ... from its name ('' when not known)."""
        return self.name.rsplit(".", 1)[1] if "." in self.name and "…" not in self.name else ""


def split_what(what: str) -> tuple[str, str]:
    """`NAME - Description` into its name and description; description alone when the line
    shows no unit name."""
    name, sep, description = what.partition(" - ")
    if sep and (UNIT_NAME.fullmatch(name) or "…" in name):
        return name, description
    found = UNIT_NAME.fullmatch(what)
    return (what, "") if found else (what, what)


def same_unit(one: str, other: str) -> bool:
    """Whether two status texts (`NAME - Description` as shown) may be one unit's: equal, or
    one cut by the console (`head…tail`) where the other, whole or cut too, agrees with its
    head and its tail. Heads and tails must be long enough to tell units apart."""
    if "…" not in one and "…" not in other:
        return one == other
    if "…" not in one:
        one, other = other, one
    head, _, tail = one.partition("…")
    if "…" not in other:
        return other.startswith(head) and other.endswith(tail) and len(other) > len(one) - 1
    head2, _, tail2 = other.partition("…")
    return min(len(head), len(head2)) >= MATCH_CHARS and min(len(tail), len(tail2)) >= \
        MATCH_CHARS and (head.startswith(head2) or head2.startswith(head)) and \
        (tail.endswith(tail2) or tail2.endswith(tail))


def read_units(lines: Iterable[ParsedLine]) -> list[UnitStep]:
    """The units a boot's lines show, in the order they became ready (those never ready
    last). A unit shown whole once (systemd's kernel-log lines are never cut) and cut
    elsewhere is one unit, under its whole name."""
    steps: list[tuple[str, UnitStep]] = []

    def step_of(what: str) -> UnitStep:
        what = _CUT_ESCAPE.sub("", what)
        found = [i for i, (text, _) in enumerate(steps) if same_unit(text, what)]
        name, description = split_what(what)
        if len(found) != 1:
            steps.append((what, UnitStep(name, description)))
            return steps[-1][1]
        text, step = steps[found[0]]
        if "…" in text and "…" not in what:  # the whole name, seen now
            step.name, step.description = name, description
            steps[found[0]] = (what, step)
        return step

    for line in lines:
        if line.host_s is None:
            continue
        message = line.message.strip("\r")
        if begin := _STARTING.match(message):
            step = step_of(begin.group("what"))
            if step.began_s is None:
                step.began_s, step.began_line = line.host_s, line.number
            continue
        done = _STATUS.match(message) or _KMSG.match(message)
        if done is None:
            continue
        step = step_of(done.group("what"))
        if done.group("verb") in _FAILED:
            step.failed = True
        elif step.ready_s is None:
            step.ready_s, step.ready_line, step.kind = line.host_s, line.number, \
                done.group("verb")
    return sorted((s for _, s in steps), key=lambda s: (s.ready_s is None, s.ready_s or 0.0))


_WORDS = re.compile(rb"OK|FAILED|DEPEND|TIME|systemd\[1\]: |Starting|Mounting|Activating")
"""A line holds one of these, or it is not a status line: the rest are not parsed again (one
search, as the app does it for every line received: 0.17 s a million lines, not 1.9 s)."""


def is_status(message: str) -> bool:
    """Whether a line's message is one of systemd's status lines (or its kernel-log twin)."""
    message = message.strip("\r")
    return bool(_STARTING.match(message) or _STATUS.match(message) or _KMSG.match(message))


def maybe_status(raw: bytes) -> bool:
    """Whether a line's bytes may be a status line (the others are not parsed)."""
    return _WORDS.search(raw) is not None


def add_units(analysis: Analysis, source: Source) -> None:
    """Each whole boot's units, from its status lines (`Boot.units`)."""
    if source.line_time is None or (source.kind == "session" and source.session is None):
        return  # no host times, or a big session read in blocks: its stream is not loaded
    for boot in analysis.boots:
        if not boot.partial:
            boot.units = read_units(boot_lines(source, analysis, boot, maybe_status))


def critical(steps: Sequence[UnitStep], count: int) -> list[UnitStep]:
    """The `count` units that took longest from start to readiness, slowest first."""
    timed = [s for s in steps if s.took_s is not None]
    return sorted(timed, key=lambda s: -(s.took_s or 0.0))[:count]


def unit_marker(name: str) -> Marker:
    """The milestone `unit:NAME`: the first status or kernel-log line showing the unit
    active. Its full name must be on the line: a name the console cut is not taken for it.

    Raises:
        ValueError: `name` is not a systemd unit's name.
    """
    if not UNIT_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a systemd unit's name (such as multi-user.target "
                         "or myapp.service)")
    verbs = "|".join(map(re.escape, _READY))
    pattern = re.compile(rf"^(?:\[\s*OK\s*\] |systemd\[1\]: )(?:{verbs}) {re.escape(name)}"
                         r"(?: - .*|\.)?$")
    return Marker(f"{UNIT_PREFIX}{name}", f"systemd unit {name} active", "userspace",
                  (pattern,))


_SHOWN = re.compile(r"systemd\.show_status=(?:1|yes|true|on)")


def status_hidden(goal: Goal, added: Sequence[str]) -> str | None:
    """Why a unit goal cannot be seen on a boot whose kernel command line gains these words
    (setting ids and tokens; None: it can). Under `quiet` systemd prints status lines only
    for failures (`show_status=auto`), so a unit's readiness never shows on the console:
    measuring to it would time out, every boot."""
    units = [ident for ident in goal.until if ident.startswith(UNIT_PREFIX)]
    if not units or "quiet" not in added or any(_SHOWN.fullmatch(word) for word in added):
        return None
    return (f"the goal {units[0]} shows on systemd's status lines, which `quiet` hides (it "
            "prints them only for failures): add cmdline+=systemd.show_status=1 to the "
            "variant, or measure to login")
