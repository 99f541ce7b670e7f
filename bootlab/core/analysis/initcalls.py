"""initcall_debug output: every initcall and driver probe with its duration, top N, diffs.

With `initcall_debug` on the kernel command line (and `ignore_loglevel` or a high enough
loglevel) the kernel prints, around each initcall,

- `calling  foo_init+0x0/0x28 @ 1` (two spaces; `[mod]` after the symbol for a module's init,
  `@` the calling task's pid), and
- `initcall foo_init+0x0/0x28 returned 0 after 1234 usecs` (newer kernels may omit the
  `+offset/size`; very old ones count `msecs`),

and after each driver probe `probe of DEVICE returned 0 after N usecs` (or `probe with driver
NAME ...`, in some kernels after the device's `driver device: ` prefix). Lines may carry a
printk stamp, with or without a `[    T1]` caller id; an initcall's start is the printk time of
its `calling` line (or of its `returned` line minus the duration). Probes run inside the
initcall that registered their driver (or in deferred probing), so totals count initcalls only.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bootlab.core.capture.stamps import parse_stamp
from bootlab.core.capture.text import clean

Kind = Literal["initcall", "probe"]

_SYMBOL = r"(?P<name>[^\s\[+]+)(?:\+0x[0-9a-fA-F]+/0x[0-9a-fA-F]+)?(?: \[(?P<module>[^\]\s]+)\])?"
_CALLING = re.compile(r"calling {1,2}" + _SYMBOL + r" @ \d+\s*$")
_RETURNED = re.compile(r"initcall " + _SYMBOL
                       + r" returned (?P<ret>-?\d+) after (?P<time>\d+) (?P<unit>[um])secs\s*$")
_PROBE = re.compile(r"(?:[^:]{1,120}: )?probe (?:of|with driver) (?P<name>\S+) "
                    r"returned (?P<ret>-?\d+) after (?P<time>\d+) usecs\s*$")
_WORDS = (b"calling", b"returned")
"""A line holding neither word is skipped before it is decoded."""


def _label(kind: Kind, name: str, module: str | None) -> str:
    if kind == "probe":
        return f"probe of {name}"
    return name + (f" [{module}]" if module else "")


@dataclass(frozen=True, slots=True)
class Initcall:
    """One initcall (or driver probe) that returned."""

    name: str
    """The function (initcall) or the device (probe), as printed, cleaned."""
    module: str | None
    """The module of a module's init function (`[ext4]`), else None."""
    start_s: float | None
    """printk time when it was called; None when the log has no printk stamps."""
    duration_us: int
    ret: int
    """Its return value (0 success, -19 -ENODEV ...)."""
    line: int
    """1-based line number of its `returned` line in the input."""
    kind: Kind = "initcall"

    @property
    def label(self) -> str:
        """A name for people: `foo_init`, `ext4_init_fs [ext4]`, `probe of 9000000.pl011`."""
        return _label(self.kind, self.name, self.module)

    def to_json(self) -> dict[str, Any]:
        """As data: kind, name, module, start_s, duration_us, ret, line."""
        return {"kind": self.kind, "name": self.name, "module": self.module,
                "start_s": self.start_s, "duration_us": self.duration_us, "ret": self.ret,
                "line": self.line}


def parse(data: bytes) -> list[Initcall]:
    """Every initcall and probe that returned, in the order of their `returned` lines.

    Args:
        data: a boot log (any kind a `Source` holds: the received stream, dmesg output).
    """
    calls: list[Initcall] = []
    pending: dict[tuple[str, str | None], list[float | None]] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not any(word in raw for word in _WORDS):
            continue
        text = clean(raw)
        stamp = parse_stamp(text)
        message = text[stamp.end:]
        match = _CALLING.match(message)
        if match:
            pending.setdefault((match["name"], match["module"]), []).append(stamp.kernel_s)
            continue
        match = _RETURNED.match(message) or _PROBE.match(message)
        if match is None:
            continue
        duration = int(match["time"]) * (1000 if match.groupdict().get("unit") == "m" else 1)
        kind: Kind = "initcall" if match.re is _RETURNED else "probe"
        module = match["module"] if kind == "initcall" else None
        started = pending.get((match["name"], module)) if kind == "initcall" else None
        start = started.pop() if started else None
        if start is None and stamp.kernel_s is not None:
            start = max(0.0, stamp.kernel_s - duration / 1e6)
        calls.append(Initcall(match["name"], module, start, duration, int(match["ret"]),
                              number, kind))
    return calls


def total_us(calls: Iterable[Initcall]) -> int:
    """Time spent in initcalls (probes are not added: they run inside initcalls)."""
    return sum(call.duration_us for call in calls if call.kind == "initcall")


def top(calls: Iterable[Initcall], n: int = 10) -> list[Initcall]:
    """The `n` longest initcalls and probes, longest first (ties in log order)."""
    return sorted(calls, key=lambda call: (-call.duration_us, call.line))[:max(n, 0)]


@dataclass(frozen=True, slots=True)
class Change:
    """An initcall's duration on side A and side B (medians over each side's boots)."""

    kind: Kind
    name: str
    module: str | None
    a_us: float | None
    """Median over the side-A boots that ran it; None when none did ("new")."""
    b_us: float | None
    """Median over the side-B boots that ran it; None when none did ("gone")."""
    n_a: int
    """Boots of side A that ran it."""
    n_b: int

    @property
    def delta_us(self) -> float:
        """B minus A; a side that never ran it counts as 0."""
        return (self.b_us or 0.0) - (self.a_us or 0.0)

    @property
    def status(self) -> Literal["new", "gone", "both"]:
        """"new" (only in B), "gone" (only in A) or "both"."""
        if self.a_us is None:
            return "new"
        return "gone" if self.b_us is None else "both"

    @property
    def label(self) -> str:
        """As `Initcall.label`."""
        return _label(self.kind, self.name, self.module)

    def to_json(self) -> dict[str, Any]:
        """As data: kind, name, module, status, a_us, b_us, delta_us, n_a, n_b."""
        return {"kind": self.kind, "name": self.name, "module": self.module,
                "status": self.status, "a_us": self.a_us, "b_us": self.b_us,
                "delta_us": self.delta_us, "n_a": self.n_a, "n_b": self.n_b}


def _per_boot(boots: Sequence[Sequence[Initcall]]) -> dict[tuple[Kind, str, str | None],
                                                         list[float]]:
    """Per initcall, its total duration in each boot that ran it."""
    out: dict[tuple[Kind, str, str | None], list[float]] = {}
    for calls in boots:
        sums: dict[tuple[Kind, str, str | None], float] = {}
        for call in calls:
            key = (call.kind, call.name, call.module)
            sums[key] = sums.get(key, 0.0) + call.duration_us
        for key, value in sums.items():
            out.setdefault(key, []).append(value)
    return out


def diff(a: Sequence[Sequence[Initcall]], b: Sequence[Sequence[Initcall]]) -> list[Change]:
    """Initcalls of two groups of boots compared, the largest change first.

    Args:
        a: side A, one list of initcalls per boot (a single boot is a group of one).
        b: side B, likewise.

    Returns:
        One change per initcall or probe seen on either side, sorted by |B - A| descending.
    """
    side_a, side_b = _per_boot(a), _per_boot(b)
    changes = []
    for key in side_a.keys() | side_b.keys():
        va, vb = side_a.get(key, []), side_b.get(key, [])
        changes.append(Change(*key, statistics.median(va) if va else None,
                              statistics.median(vb) if vb else None, len(va), len(vb)))
    return sorted(changes, key=lambda c: (-abs(c.delta_us), c.kind, c.name, c.module or ""))


def diff_groups(inputs: Sequence[tuple[str, str, Sequence[Initcall]]]
                ) -> list[tuple[str, str, list[Change]]]:
    """Each group of boots against the first, as `bootlab compare` groups columns.

    Args:
        inputs: (name, label, initcalls) per boot; boots sharing a label form a group (named
            by the label), any other boot is a group of its own (named by `name`). Inputs
            without initcalls are left out.

    Returns:
        (first group's name, other group's name, changes) for every group after the first.
    """
    counts: dict[str, int] = {}
    for _, label, _ in inputs:
        counts[label] = counts.get(label, 0) + 1
    groups: dict[str, list[Sequence[Initcall]]] = {}
    for name, label, calls in inputs:
        if calls:
            key = label if label and counts[label] > 1 else name
            groups.setdefault(key, []).append(calls)
    names = list(groups)
    return [(names[0], other, diff(groups[names[0]], groups[other])) for other in names[1:]]


def duration_text(us: float) -> str:
    """A duration in microseconds in words: `12.3 ms`, or `850 us` below a millisecond."""
    return f"{us / 1000:.1f} ms" if abs(us) >= 1000 else f"{us:.0f} us"


def describe_change(change: Change) -> str:
    """One line for people: `+61.2 ms virtio_blk_init [virtio_blk] (4.1 -> 65.3 ms)`."""
    def side(value: float | None) -> str:
        return "-" if value is None else duration_text(value)

    sign = "+" if change.delta_us >= 0 else "-"
    note = {"new": " (new)", "gone": " (gone)", "both": ""}[change.status]
    return (f"{sign}{duration_text(abs(change.delta_us))} {change.label}{note} "
            f"({side(change.a_us)} -> {side(change.b_us)})")
