"""A goal no line shows: the application is ready when a command at the board's shell says so.

`--until "ready:systemctl is-active myapp"` (or `ready:test -e /run/app.ready`): after the
login prompt bootlab logs in and runs the command again and again, each run bracketed by the
host times its line was sent and its answer came back (`LinuxShell.timed`), until it succeeds.
The session keeps the polls as a `collected` event (`"source": "ready"`): the first, the last
that failed and the first that succeeded.

The condition was false at some moment of the last failed run and true at some moment of the
first successful one, so it turned true between the first's sending and the second's answer:
the milestone `ready:COMMAND` sits in the middle, ± half of that. A command that succeeded at
its first run was true before bootlab could ask (the shell comes after the login prompt): the
goal is reached, but when is not known, and no time is given.

Several goals asked after login (`--all`) are asked together, round after round: each
command's runs are its own, so each is placed as when asked alone, only polled less often.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bootlab.core.analysis.collected import boot_of
from bootlab.core.analysis.phases import Milestone
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.capture.sources import Source

READY_PREFIX = "ready:"
"""A goal id naming a shell command that succeeds once the application is ready."""
JOURNAL_PREFIX = "journal:"
"""A goal id naming a pattern a journal message of the boot matches (`journal_goal`)."""
SOURCE = "ready"
"""The `collected` event's source, and the milestone's."""


def ready_command(ident: str) -> str | None:
    """The command of a `ready:COMMAND` goal id (None: another kind of id)."""
    return ident.removeprefix(READY_PREFIX).strip() if ident.startswith(READY_PREFIX) else None


def journal_pattern(ident: str) -> str | None:
    """The pattern of a `journal:REGEX` goal id (None: another kind of id)."""
    return ident.removeprefix(JOURNAL_PREFIX) if ident.startswith(JOURNAL_PREFIX) else None


def _run(value: object) -> tuple[int, int] | None:
    """A poll's (sent, back) session times in ns, if well formed."""
    if not isinstance(value, Mapping):
        return None
    sent, back = value.get("sent"), value.get("back")
    if not isinstance(sent, int) or not isinstance(back, int) or back < sent:
        return None
    return sent, back


def place(event: Mapping[str, Any]) -> tuple[Milestone | None, str]:
    """The `ready:` milestone a collected `ready` event gives (None: it gives none), and what
    it says in words."""
    command = str(event.get("command") or "")
    polls = event.get("polls") if isinstance(event.get("polls"), int) else 0
    ok, failed, first = _run(event.get("ok")), _run(event.get("failed")), \
        _run(event.get("first"))
    ident = f"{READY_PREFIX}{command}"
    if ok is None:
        span = "" if first is None or failed is None else \
            f" over {(failed[1] - first[0]) / 1e9:.1f} s"
        return None, f"`{command}` never succeeded: {polls} runs after login{span}"
    if failed is None:
        return None, (f"`{command}` succeeded at its first run: it was true before bootlab "
                      "could ask (after login), so when it turned true is not known")
    low, high = failed[0] / 1e9, ok[1] / 1e9
    half_ms = (high - low) * 500.0
    milestone = Milestone(ident, f"ready: {command}", "userspace", 0, f"`{command}` succeeded",
                          (low + high) / 2, None, None, {}, source=SOURCE,
                          uncertainty_ms=half_ms)
    return milestone, (f"`{command}` turned true within {half_ms * 2:.0f} ms, from the "
                       f"sending of its last failed run to the answer of its first success "
                       f"({polls} runs after login): placed within ±{half_ms:.1f} ms")


def ready_events(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The `ready` polls a session's events hold."""
    return [e for e in events if e.get("event") == "collected" and e.get("source") == SOURCE]


def join(analysis: Analysis, event: Mapping[str, Any],
         found: tuple[Milestone | None, str]) -> None:
    """Join a goal asked after login (`ready:`, `journal:`) to the boot it was asked after:
    its milestone in the table (when it has a time), its words in the boot's `ready` note."""
    boot = boot_of(analysis, dict(event))
    if boot is None or boot.partial:
        return
    milestone, said = found
    if milestone is not None and boot.gap is not None:
        said = f"{said}; not in the table: bytes of this boot were lost"
    boot.ready = said if boot.ready is None else f"{boot.ready}; {said}"  # several asked
    if milestone is not None and boot.gap is None:
        placed = replace(milestone, boot=boot.index, offset=boot.first_offset)
        boot.milestones = sorted([*boot.milestones, placed],
                                 key=lambda m: float("inf") if m.host_s is None else m.host_s)


def add_ready(analysis: Analysis, source: Source) -> None:
    """Join each `ready` goal's polls to the boot they were run after."""
    for event in ready_events(source.session.events if source.session is not None else ()):
        join(analysis, event, place(event))
