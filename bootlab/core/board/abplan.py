"""A/B runs: the variants' settings specs, the boot plan, and the run's state on disk.

**Variants** are given as `NAME:SPEC` (see `parse_variant`); SPEC is a comma-separated list of
items (see `parse_spec`), each one of:

| item               | kind             | meaning (applied by `board.plan`)                      |
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

**Several boards** (`next_for`): a run spread over identical boards gives each round to one
board, so each board boots every variant equally often, each round in its random order; a
free board takes the lowest round nobody is booting (a round it left half done first, and never
one another board of this run left half done). The state records the board of each boot done,
so the statistics take the board as a block and a resumed run keeps each round on its board.

**The state**, `<sessions>/ab-NAME.json`, holds the plan, its seed, the variants with their
spec strings and which runs are done with their session files (and boards). It is rewritten
atomically (`files.atomic`), so an interruption leaves either the old or the new state.

**Until decided** (`Until`): the plan is made for the budget (`boots` rounds) and booted round
by round up to the next planned look of `analysis.sequential`; once the rounds up to a look are
all done the run is judged (`due_look`, `record_look`) and either stops there or goes on to the
next look. The judged looks are in the state, so an interrupted run resumes at the same place.
"""

from __future__ import annotations

import json
import random
import re
import secrets
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bootlab.core.analysis.profiles import STAGES
from bootlab.core.analysis.sequential import Design, spending
from bootlab.core.board.settings import Setting
from bootlab.core.capture.session import SessionError, load_session
from bootlab.core.files.atomic import write_atomic

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


def acts_from(items: Sequence[SpecItem], settings: Sequence[Setting]) -> str:
    """The boot stage (`profiles.STAGES`) from which these items can change anything: the
    bootloader for U-Boot variables (bootdelay acts in U-Boot's countdown), the kernel for
    kernel command-line settings (the kernel reads its line when it starts); the earliest of
    the items'. A milestone of an earlier stage cannot be changed by them. No items: the last
    stage (nothing acts)."""
    by_id = {s.id: s for s in settings}
    stages = [STAGES.index("kernel") if item.kind.startswith("cmdline")
              or (item.kind == "setting" and item.name in by_id
                  and by_id[item.name].kind.startswith("cmdline"))
              else STAGES.index("bootloader") for item in items]
    return STAGES[min(stages, default=len(STAGES) - 1)]


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


def numbered_name(stem: str, path_of: Callable[[str], Path],
                  resumable: Callable[[Path], bool]) -> str:
    """`STEM-N` for a run's state: the first N whose file is missing or whose run `resumable`
    says to go on with (an A/B run, a tune)."""
    number = 1
    while (path := path_of(name := f"{stem}-{number}")).exists() and not resumable(path):
        number += 1
    return name


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


@dataclass(frozen=True)
class Judged:
    """A look of an `--until-decided` run, as judged."""

    boots: int
    """Boots per variant at the look."""
    decided: bool
    """Every variant's interval answered the question: the run stopped there."""
    lines: tuple[str, ...]
    """Each variant's look in words (`sequential.Look.text`)."""


@dataclass
class Until:
    """An `--until-decided` run: the smallest difference that matters and the looks judged."""

    effect_s: float
    judged: list[Judged] = field(default_factory=list)


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
    contradicted: dict[tuple[str, int], str] = field(default_factory=dict)
    """(variant, run) -> a session whose boot showed a setting against its variant
    (`board.verify`): not done, left out of the statistics, booted again on resume."""
    until: Until | None = None
    """Set for an `--until-decided` run (then `boots` is its budget per variant)."""
    boards: dict[tuple[str, int], str] = field(default_factory=dict)
    """(variant, run) -> the board its done boot ran on (missing: not known, an older run)."""

    @property
    def design(self) -> Design:
        """The looks and their alpha (`sequential.spending`) of an `--until-decided` run."""
        return spending(self.boots, comparisons=max(1, len(self.variants) - 1))

    @property
    def reach(self) -> int:
        """Rounds to boot before the run stops or is next judged: all of them for a fixed
        run; else the look judged last when it decided (or spent the budget), or the next."""
        if self.until is None:
            return self.boots
        last = self.until.judged[-1] if self.until.judged else None
        if last is not None and (last.decided or last.boots >= self.boots):
            return last.boots
        return next(n for n in self.design.looks if last is None or n > last.boots)

    @property
    def total(self) -> int:
        """Boots in the plan up to `reach`."""
        return sum(run <= self.reach for _, run in self.plan)

    def next_run(self) -> tuple[str, int] | None:
        """The first run of the plan up to `reach` not done yet; None when none is left (the
        run is complete, or a look is due)."""
        return next((step for step in self.plan if step[1] <= self.reach
                     and step not in self.done), None)

    def next_for(self, board: str, present: Collection[str],
                 busy: Mapping[int, str]) -> tuple[str, int] | None:
        """The run `board` boots next when a run is spread over the `present` boards and
        `busy` says which board boots each round in progress; None: nothing for it now.

        Each round stays on one board: its own round in progress first, else a round it left
        half done, else the lowest round up to `reach` that no board is booting and that no
        other present board has begun (a round begun on a board not in this run goes to any).
        With one board this is `next_run`.
        """
        rounds: dict[int, list[tuple[str, int]]] = {}
        for step in self.plan:
            if step[1] <= self.reach and step not in self.done:
                rounds.setdefault(step[1], []).append(step)

        def begun_on(run: int) -> set[str]:
            return {self.boards.get((variant, run), "") for variant in self.variants
                    if (variant, run) in self.done}

        mine = [run for run in rounds if busy.get(run) == board or board in begun_on(run)]
        free = [run for run in rounds if run not in busy
                and not any(other in present for other in begun_on(run) - {board})]
        chosen = min(mine or free, default=None)
        return None if chosen is None else rounds[chosen][0]

    def due_look(self) -> int | None:
        """The look (0-based) to judge now: every round up to it is done, it is not judged."""
        if self.until is None or self.next_run() is not None:
            return None
        judged = self.until.judged[-1].boots if self.until.judged else 0
        return None if self.reach <= judged else self.design.looks.index(self.reach)

    def record_look(self, boots: int, decided: bool, lines: Sequence[str]) -> None:
        """Keep a judged look (the run stops there when `decided`), and save the state."""
        if self.until is None:
            raise ValueError(f"{self.name} is not an --until-decided run")
        self.until.judged.append(Judged(boots, decided, tuple(lines)))
        self.save()

    @property
    def finished(self) -> bool:
        """Nothing is left to boot and no look is due."""
        return self.next_run() is None and self.due_look() is None

    def progress(self, step: tuple[str, int], number: int | None = None) -> str:
        """A progress line for a run about to boot: `boot 3/10: quiet, run 2 of 5`, or for an
        `--until-decided` run `boot 3/6 (look 1; budget 40 each): quiet, run 2`; `number`:
        the boot's number when not the next after those done (boots in parallel)."""
        number = len(self.done) + 1 if number is None else number
        if self.until is not None:
            return (f"boot {number}/{self.total} "
                    f"(look {self.design.looks.index(self.reach) + 1}; budget {self.boots} "
                    f"each): {step[0]}, run {step[1]}")
        return (f"boot {number}/{self.total}: {step[0]}, "
                f"run {step[1]} of {self.boots}")

    def session_meta(self, variant: str, run: int, board: str = "") -> dict[str, Any]:
        """What to put in that run's session header: label, settings spec and the A/B tag
        (with the board it runs on, when known)."""
        return {"label": variant,
                "ab": {"name": self.name, "variant": variant, "run": run, "seed": self.seed,
                       "spec": self.variants[variant], **({"board": board} if board else {})}}

    def mark_done(self, variant: str, run: int, session: str, board: str = "") -> None:
        """Record a run as done with its session file name (and board), and save the state."""
        if (variant, run) not in self.plan:
            raise ValueError(f"{variant} run {run} is not in the plan of {self.name}")
        self.done[(variant, run)] = session
        if board:
            self.boards[(variant, run)] = board
        self.save()

    def mark_contradicted(self, variant: str, run: int, session: str) -> None:
        """Record a run's boot as contradicting its variant, and save the state."""
        self.contradicted[(variant, run)] = session
        self.save()

    def to_json(self) -> dict[str, Any]:
        """The state as JSON-ready data."""
        return {
            "format": STATE_FORMAT, "version": STATE_VERSION, "name": self.name,
            "seed": self.seed, "boots": self.boots,
            "variants": [{"name": n, "spec": s} for n, s in self.variants.items()],
            "plan": [[v, r] for v, r in self.plan],
            "done": [{"variant": v, "run": r, "session": self.done[(v, r)],
                      **({"board": self.boards[(v, r)]} if (v, r) in self.boards else {})}
                     for v, r in self.plan if (v, r) in self.done],
            "contradicted": [{"variant": v, "run": r, "session": s}
                             for (v, r), s in self.contradicted.items()],
            **({} if self.until is None else {"until": {
                "effect_s": self.until.effect_s,
                "looks": [{"boots": j.boots, "decided": j.decided, "lines": list(j.lines)}
                          for j in self.until.judged]}}),
        }

    def save(self) -> None:
        """Write the state atomically (`files.atomic`)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.path, json.dumps(self.to_json(), indent=1) + "\n")

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
        boards: dict[tuple[str, int], str] = {}
        for entry in data["done"]:
            step = (str(entry["variant"]), int(entry["run"]))
            if step not in plan:
                raise ValueError(f"done run {step[0]} #{step[1]} is not in the plan")
            done[step] = str(entry["session"])
            if entry.get("board"):
                boards[step] = str(entry["board"])
        contradicted = {(str(e["variant"]), int(e["run"])): str(e["session"])
                        for e in data.get("contradicted", [])}
        until = data.get("until")
        return cls(path, str(data["name"]), seed, boots, variants, plan, done,
                   contradicted=contradicted, boards=boards, until=None if until is None else Until(
                       float(until["effect_s"]),
                       [Judged(int(j["boots"]), bool(j["decided"]), tuple(map(str, j["lines"])))
                        for j in until["looks"]]))


def ab_board(meta: dict[str, Any]) -> str:
    """The board an A/B session's tag names (`ABState.session_meta`); '' for none."""
    tag = meta.get("ab")
    return str(tag.get("board") or "") if isinstance(tag, dict) else ""


def load_or_create(folder: Path, name: str, variants: Sequence[tuple[str, str]], boots: int,
                   seed: int | None = None,
                   complete: Callable[[Path], bool] = session_complete,
                   until_effect_s: float | None = None, save: bool = True) -> ABState:
    """Resume the A/B run `name` from its state file in `folder`, or plan and save a new one.

    On resume, a run counts as done only if its session file exists and is complete
    (`complete`); the others are dropped (see `ABState.dropped`) and booted again.

    Args:
        folder: the sessions folder.
        name: the run's name (the state file is `ab-NAME.json`).
        variants: (name, spec) pairs as `parse_variant` gives them; the first is the baseline.
        boots: boots per variant (the budget of an `--until-decided` run).
        seed: the plan's seed; by default a random one (stored, so a resume needs none).
        complete: whether a session file holds a complete boot.
        until_effect_s: an `--until-decided` run with this smallest difference that matters;
            None for a fixed run of `boots` rounds.
        save: write a new run's state file now (False: once the caller has its boards, so a
            run refused before then leaves none).

    Raises:
        ABStateError: the state file is unreadable, or was made for other variants, boots,
            seed or way of stopping.
        SpecError: a spec is malformed.
        ValueError: bad variants or boots (see `make_plan`), or a bad name.
    """
    path = state_path(folder, name)
    names = [n for n, _ in variants]
    if len(set(names)) != len(names):
        raise ValueError(f"variant names must differ: {', '.join(names)}")
    wanted = {n: format_spec(parse_spec(s)) for n, s in variants}
    if not path.exists():
        if until_effect_s is not None and boots < 2:
            raise ValueError(f"a budget of {boots} boots per variant: an interval needs two "
                             "boots a side or more")
        seed = secrets.randbelow(2**31) if seed is None else seed
        state = ABState(path, name, seed, boots, wanted, make_plan(names, boots, seed),
                        until=None if until_effect_s is None else Until(until_effect_s))
        if save:
            state.save()
        return state
    state = ABState.load(path)
    if state.variants != wanted or state.boots != boots:
        given = ", ".join(f"{n}:{s}" for n, s in state.variants.items())
        raise ABStateError(
            f"{path}: A/B run {name!r} was started with variants {given} and {state.boots} "
            "boots each; resume it with the same variants and boots, or use another name")
    effect = None if state.until is None else state.until.effect_s
    if effect != until_effect_s:
        started = "a fixed run" if effect is None else \
            f"--until-decided with an effect of {effect * 1000:g} ms"
        raise ABStateError(f"{path}: A/B run {name!r} was started as {started}; resume it "
                           "the same way, or use another name")
    if seed is not None and seed != state.seed:
        raise ABStateError(f"{path}: A/B run {name!r} was planned with seed {state.seed}, "
                           f"not {seed}; resume it without a seed or with that one")
    for (variant, run), session in list(state.done.items()):
        if not complete(folder / session):
            del state.done[(variant, run)]
            state.boards.pop((variant, run), None)
            state.dropped.append(f"{variant} run {run}: session {session} is missing or "
                                 "incomplete; booting it again")
    if state.dropped:
        state.save()
    return state
