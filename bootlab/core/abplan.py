"""A/B runs: the variants' settings specs, the boot plan, and the run's state on disk.

**Variants** are given as `NAME:SPEC` (see `parse_variant`); SPEC is a comma-separated list of
items (see `parse_spec`), each one of:

| item               | kind             | meaning (applied by bootlab/core/settings.py)          |
|--------------------|------------------|--------------------------------------------------------|
| `ID`               | `setting`        | a one-key setting of the settings model: `quiet`       |
| `ID=VALUE`         | `setting`        | a setting with a value: `bootdelay=0`                  |
| `uboot:VAR=VALUE`  | `uboot`          | a raw U-Boot variable (an empty VALUE is kept empty)   |
| `cmdline+=TOKEN`   | `cmdline_add`    | add one token to the kernel command line               |
| `cmdline-=TOKEN`   | `cmdline_remove` | remove one token from the kernel command line          |

`\\,` is a literal comma inside an item (`cmdline+=console=ttyS0\\,115200`) and `\\\\` a
backslash; items are stripped of surrounding blanks. A variant named `base`, or with an empty
spec (`NAME:`), boots the board as it is.

**The plan** has N rounds; each round boots every variant once, in its own random order. Slow
drift (a board warming up, a flash cache filling, a busy host) then falls on every variant
alike instead of on whichever ran last, and the random order inside a round keeps a fixed
position (always first after a power cycle, say) from favouring one variant.

**The state**, `<sessions>/ab-NAME.json`, holds the plan, its seed, the variants with their
spec strings and which runs are done with their session files. It is rewritten atomically
(temporary file, fsync, rename), so an interruption leaves either the old or the new state.
"""

from __future__ import annotations

import json
import os
import random
import re
import secrets
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bootlab.core.session import SessionError, load_session

SpecKind = Literal["setting", "uboot", "cmdline_add", "cmdline_remove"]
BASE = "base"
"""The variant name that means: the board as it is."""
STATE_FORMAT = "bootlab-ab"
STATE_VERSION = 1

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}\Z")
"""Variant and run names: safe in a session label and a file name as they are."""
_SETTING_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_UBOOT_VAR = re.compile(r"[A-Za-z0-9_.#-]+\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FORMS = "ID, ID=VALUE, uboot:VAR=VALUE, cmdline+=TOKEN or cmdline-=TOKEN"


class SpecError(ValueError):
    """A variant or settings spec is malformed; the message says where and why."""


class ABStateError(Exception):
    """An A/B state file cannot be used; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class SpecItem:
    """One item of a settings spec."""

    kind: SpecKind
    name: str
    """The setting id or U-Boot variable; '' for command-line items."""
    value: str | None
    """The setting's value (None: a one-key setting), the U-Boot value or the token."""

    def __str__(self) -> str:
        """The item as spec text (commas and backslashes escaped)."""
        value = (self.value or "").replace("\\", "\\\\").replace(",", "\\,")
        if self.kind == "uboot":
            return f"uboot:{self.name}={value}"
        if self.kind == "cmdline_add":
            return f"cmdline+={value}"
        if self.kind == "cmdline_remove":
            return f"cmdline-={value}"
        return self.name if self.value is None else f"{self.name}={value}"


def _split(spec: str) -> list[str]:
    """Split on commas not escaped by a backslash; undo the `\\,` and `\\\\` escapes."""
    items: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(spec):
        char = spec[i]
        if char == "\\" and spec[i + 1:i + 2] in (",", "\\"):
            current.append(spec[i + 1])
            i += 2
            continue
        if char == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    items.append("".join(current))
    return items


def _token(item: str, token: str) -> str:
    if not token:
        raise SpecError(f"{item!r}: no token after '='")
    if any(c.isspace() for c in token):
        raise SpecError(f"{item!r}: a command-line token has no blanks (one item per token)")
    return token


def _item(item: str) -> SpecItem:
    if item.startswith("cmdline+="):
        return SpecItem("cmdline_add", "", _token(item, item[len("cmdline+="):]))
    if item.startswith("cmdline-="):
        return SpecItem("cmdline_remove", "", _token(item, item[len("cmdline-="):]))
    if item.startswith("uboot:"):
        var, equals, value = item[len("uboot:"):].partition("=")
        if not equals:
            raise SpecError(f"{item!r}: write uboot:VAR=VALUE")
        if not _UBOOT_VAR.match(var):
            raise SpecError(f"{item!r}: {var!r} is not a U-Boot variable name "
                            "(letters, digits, _ . # -)")
        return SpecItem("uboot", var, value)
    setting, equals, value = item.partition("=")
    if not _SETTING_ID.match(setting):
        raise SpecError(f"{item!r}: not a settings item; expected {_FORMS}")
    if equals and not value:
        raise SpecError(f"{item!r}: no value after '='")
    return SpecItem("setting", setting, value if equals else None)


def parse_spec(spec: str) -> list[SpecItem]:
    """The items of a settings spec; [] for an empty spec (the board as it is).

    Raises:
        SpecError: an item is malformed, empty, repeated or contradicts another.
    """
    if not spec.strip():
        return []
    items: list[SpecItem] = []
    keys: dict[tuple[str, str], SpecItem] = {}
    for number, raw in enumerate(_split(spec), start=1):
        if _CONTROL.search(raw):
            raise SpecError(f"{raw!r}: control characters are not allowed")
        text = raw.strip()
        if not text:
            raise SpecError(f"item {number} of {spec!r} is empty (a stray comma?)")
        item = _item(text)
        key = ("cmdline", item.value or "") if item.kind.startswith("cmdline") else \
            (item.kind, item.name)
        if key in keys:
            other = keys[key]
            why = "given twice" if other == item else f"contradicts {str(other)!r}"
            raise SpecError(f"{text!r} {why}")
        keys[key] = item
        items.append(item)
    return items


def format_spec(items: Sequence[SpecItem]) -> str:
    """The canonical spec text of items (what `parse_spec` reads back unchanged)."""
    return ",".join(map(str, items))


def parse_variant(text: str) -> tuple[str, str]:
    """A `--variant` value as (name, canonical spec).

    Forms: `NAME:SPEC`; `NAME:` or `base` (the board as it is); `NAME` alone is short for
    `NAME:NAME`, a variant made of the one setting it is named after (`quiet`, `bootdelay0`).
    NAME is 1-40 letters, digits or `_ . + -` (it becomes the sessions' label).

    Raises:
        SpecError: the name or the spec is malformed, or `base` is given settings.
    """
    name, colon, spec = text.partition(":")
    name = name.strip()
    if not _NAME.match(name):
        raise SpecError(f"variant {text!r}: the name must be 1-40 letters, digits or _ . + - "
                        "(write NAME:SETTINGS)")
    if not colon and name != BASE:
        spec = name
    items = parse_spec(spec)
    if name == BASE and items:
        raise SpecError(f"variant {text!r}: '{BASE}' is the board as it is and takes no "
                        "settings; give this variant another name")
    return name, format_spec(items)


def make_plan(variants: Sequence[str], boots: int, seed: int) -> list[tuple[str, int]]:
    """The boot order: `boots` rounds, each every variant once in a random order.

    Returns (variant, run) pairs, run counting rounds from 1; the same seed gives the same plan.

    Raises:
        ValueError: no variants, a name given twice, or fewer than one boot.
    """
    if not variants:
        raise ValueError("an A/B plan needs at least one variant")
    if len(set(variants)) != len(variants):
        raise ValueError(f"variant names must differ: {', '.join(variants)}")
    if boots < 1:
        raise ValueError(f"boots per variant must be 1 or more, not {boots}")
    rng = random.Random(seed)
    plan: list[tuple[str, int]] = []
    for run in range(1, boots + 1):
        order = list(variants)
        rng.shuffle(order)
        plan += [(variant, run) for variant in order]
    return plan


def state_path(folder: Path, name: str) -> Path:
    """Where the A/B run `name` keeps its state.

    Raises:
        ValueError: the name is not 1-40 letters, digits or `_ . + -`.
    """
    if not _NAME.match(name):
        raise ValueError(f"A/B run name {name!r}: use 1-40 letters, digits or _ . + -")
    return folder / f"ab-{name}.json"


def session_complete(path: Path) -> bool:
    """The session file exists and its boot reached its goal (closed with reason "done")."""
    try:
        session = load_session(path)
    except SessionError:
        return False
    return any(e.get("event") == "end" and e.get("reason") == "done" for e in session.events)


@dataclass
class ABState:
    """An A/B run: its plan and which runs are done."""

    path: Path
    name: str
    seed: int
    boots: int
    variants: dict[str, str]
    """Variant name -> canonical settings spec, in the order given (the first is the baseline)."""
    plan: list[tuple[str, int]]
    done: dict[tuple[str, int], str] = field(default_factory=dict)
    """(variant, run) -> its session's file name (in the state's folder)."""
    dropped: list[str] = field(default_factory=list)
    """Runs found done but whose session is missing or incomplete, in words; booted again."""

    @property
    def total(self) -> int:
        """Boots in the plan."""
        return len(self.plan)

    def next_run(self) -> tuple[str, int] | None:
        """The first run of the plan not done yet; None when the run is complete."""
        return next((step for step in self.plan if step not in self.done), None)

    def progress(self, step: tuple[str, int]) -> str:
        """A progress line for a run about to boot: `boot 3/10: quiet, run 2 of 5`."""
        return (f"boot {len(self.done) + 1}/{self.total}: {step[0]}, "
                f"run {step[1]} of {self.boots}")

    def session_meta(self, variant: str, run: int) -> dict[str, Any]:
        """What to put in that run's session header: label, settings spec and the A/B tag."""
        return {"label": variant,
                "ab": {"name": self.name, "variant": variant, "run": run, "seed": self.seed,
                       "spec": self.variants[variant]}}

    def mark_done(self, variant: str, run: int, session: str) -> None:
        """Record a run as done with its session file name, and save the state."""
        if (variant, run) not in self.plan:
            raise ValueError(f"{variant} run {run} is not in the plan of {self.name}")
        self.done[(variant, run)] = session
        self.save()

    def to_json(self) -> dict[str, Any]:
        """The state as JSON-ready data."""
        return {
            "format": STATE_FORMAT, "version": STATE_VERSION, "name": self.name,
            "seed": self.seed, "boots": self.boots,
            "variants": [{"name": n, "spec": s} for n, s in self.variants.items()],
            "plan": [[v, r] for v, r in self.plan],
            "done": [{"variant": v, "run": r, "session": self.done[(v, r)]}
                     for v, r in self.plan if (v, r) in self.done],
        }

    def save(self) -> None:
        """Write the state atomically: a temporary file in the same folder, fsync, rename."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.",
                                    suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.to_json(), handle, indent=1)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        folder = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)

    @classmethod
    def load(cls, path: Path) -> ABState:
        """Read a state file.

        Raises:
            ABStateError: it cannot be read or is not a consistent A/B state.
        """
        advice = "delete it to start this A/B run afresh, or choose another name"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise ABStateError(f"{path}: cannot read: {error.strerror or error}") from None
        except ValueError as error:
            raise ABStateError(f"{path}: not a readable A/B state ({error}); {advice}") \
                from None
        try:
            return cls._from_json(path, data)
        except (KeyError, TypeError, ValueError) as error:
            reason = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise ABStateError(f"{path}: not a valid A/B state ({reason}); {advice}") from None

    @classmethod
    def _from_json(cls, path: Path, data: Any) -> ABState:
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise ValueError(f"no '{STATE_FORMAT}' format field")
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"format version {data.get('version')!r}, this bootlab reads "
                             f"{STATE_VERSION}")
        seed, boots = data["seed"], data["boots"]
        if not isinstance(seed, int) or not isinstance(boots, int):
            raise TypeError("seed and boots must be integers")
        variants: dict[str, str] = {}
        for entry in data["variants"]:
            name, spec = str(entry["name"]), str(entry["spec"])
            parse_spec(spec)
            variants[name] = spec
        plan = [(str(v), int(r)) for v, r in data["plan"]]
        if sorted(plan) != sorted((v, r) for v in variants for r in range(1, boots + 1)):
            raise ValueError("the plan does not boot each variant once per round")
        done: dict[tuple[str, int], str] = {}
        for entry in data["done"]:
            step = (str(entry["variant"]), int(entry["run"]))
            if step not in plan:
                raise ValueError(f"done run {step[0]} #{step[1]} is not in the plan")
            done[step] = str(entry["session"])
        return cls(path, str(data["name"]), seed, boots, variants, plan, done)


def load_or_create(folder: Path, name: str, variants: Sequence[tuple[str, str]], boots: int,
                   seed: int | None = None,
                   complete: Callable[[Path], bool] = session_complete) -> ABState:
    """Resume the A/B run `name` from its state file in `folder`, or plan and save a new one.

    On resume, a run counts as done only if its session file exists and is complete
    (`complete`); the others are dropped (see `ABState.dropped`) and booted again.

    Args:
        folder: the sessions folder.
        name: the run's name (the state file is `ab-NAME.json`).
        variants: (name, spec) pairs as `parse_variant` gives them; the first is the baseline.
        boots: boots per variant.
        seed: the plan's seed; by default a random one (stored, so a resume needs none).
        complete: whether a session file holds a complete boot.

    Raises:
        ABStateError: the state file is unreadable, or was made for other variants, boots or
            seed.
        SpecError: a spec is malformed.
        ValueError: bad variants or boots (see `make_plan`), or a bad name.
    """
    path = state_path(folder, name)
    names = [n for n, _ in variants]
    if len(set(names)) != len(names):
        raise ValueError(f"variant names must differ: {', '.join(names)}")
    wanted = {n: format_spec(parse_spec(s)) for n, s in variants}
    if not path.exists():
        seed = secrets.randbelow(2**31) if seed is None else seed
        state = ABState(path, name, seed, boots, wanted, make_plan(names, boots, seed))
        state.save()
        return state
    state = ABState.load(path)
    if state.variants != wanted or state.boots != boots:
        given = ", ".join(f"{n}:{s}" for n, s in state.variants.items())
        raise ABStateError(
            f"{path}: A/B run {name!r} was started with variants {given} and {state.boots} "
            "boots each; resume it with the same variants and boots, or use another name")
    if seed is not None and seed != state.seed:
        raise ABStateError(f"{path}: A/B run {name!r} was planned with seed {state.seed}, "
                           f"not {seed}; resume it without a seed or with that one")
    for (variant, run), session in list(state.done.items()):
        if not complete(folder / session):
            del state.done[(variant, run)]
            state.dropped.append(f"{variant} run {run}: session {session} is missing or "
                                 "incomplete; booting it again")
    if state.dropped:
        state.save()
    return state
