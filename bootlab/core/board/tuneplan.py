"""Tune runs (`bootlab tune`): the boot-cutting loop's state on disk and its progress events.

A tune measures the board as it is (the baseline), then, step by step, A/B-tests the
recommendation with the largest predicted saving against the best configuration so far (the
settings kept) and keeps it only when it proved a saving. Each step is a `TuneStep`; the whole
run is a `TuneState`, `<sessions>/tune-NAME.json`, rewritten atomically (`files.atomic`) after
every change, so an interrupted tune resumes where it stopped and a crashed one can still be
undone: `env_backup` holds the U-Boot environment as it was before the first change.

The loop itself (`control.tuneloop`) reports its progress with the events below (plain frozen
dataclasses), so a command can print lines and the app can draw the steps live.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from bootlab.core.board.abplan import SpecError, format_spec, parse_spec
from bootlab.core.files.atomic import write_atomic

Outcome = Literal["running", "kept", "rejected", "harmful", "needs rebuild"]
OUTCOMES: tuple[str, ...] = get_args(Outcome)
STATE_FORMAT = "bootlab-tune"
STATE_VERSION = 1
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,29}\Z")
"""Tune names: 1-30 characters, so that its A/B runs `NAME-N` are valid A/B names."""


class TuneStateError(Exception):
    """A tune state file cannot be used; the message says why and what to do."""


@dataclass
class TuneStep:
    """One candidate setting tried (or listed) by a tune, and what came of it."""

    setting: str
    """The spec item tried, as `bootlab ab --variant` takes it: `quiet`, `bootdelay=0`."""
    title: str
    """The recommendation's title, in words."""
    predicted_ms: float
    """The saving the recommendation predicted."""
    ab_name: str | None = None
    """The name of the step's A/B run (its state is `ab-NAME.json`); None before it starts."""
    outcome: Outcome = "running"
    why: str = ""
    """Why it was kept, rejected or found harmful, in words."""
    saving_ms: float | None = None
    """The measured saving at the goal, ms: the kept configuration's mean minus the
    candidate's (positive: faster)."""
    low_ms: float | None = None
    """The low end of the saving's interval (ms; positive: faster, like `saving_ms`)."""
    high_ms: float | None = None
    """The high end of the saving's interval (ms)."""
    boots: int = 0
    """Boots per variant the A/B run took."""
    evidence: tuple[str, ...] = ()
    """How the setting was verified in force: the A/B report's evidence lines."""

    def to_json(self) -> dict[str, Any]:
        """The step as JSON-ready data."""
        return {"setting": self.setting, "title": self.title,
                "predicted_ms": self.predicted_ms, "ab_name": self.ab_name,
                "outcome": self.outcome, "why": self.why, "saving_ms": self.saving_ms,
                "low_ms": self.low_ms, "high_ms": self.high_ms, "boots": self.boots,
                "evidence": list(self.evidence)}

    @classmethod
    def from_json(cls, data: Any) -> TuneStep:
        """A step from `to_json` data.

        Raises:
            KeyError, TypeError, ValueError: the data is not a step.
        """
        if not isinstance(data, dict):
            raise TypeError("a step is not an object")
        outcome = data["outcome"]
        if outcome not in OUTCOMES:
            raise ValueError(f"step outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
        parse_spec(str(data["setting"]))

        def number(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        ab_name = data.get("ab_name")
        return cls(str(data["setting"]), str(data["title"]), float(data["predicted_ms"]),
                   None if ab_name is None else str(ab_name), outcome, str(data["why"]),
                   number("saving_ms"), number("low_ms"), number("high_ms"),
                   int(data["boots"]), tuple(map(str, data["evidence"])))


def state_path(folder: Path, name: str) -> Path:
    """Where the tune `name` keeps its state.

    Raises:
        ValueError: the name is not 1-30 letters, digits or `_ . + -`.
    """
    if not _NAME.match(name):
        raise ValueError(f"tune name {name!r}: use 1-30 letters, digits or _ . + -")
    return folder / f"tune-{name}.json"


@dataclass
class TuneState:
    """A tune run: what it was asked, what it kept, tried and measured, and how to undo it."""

    path: Path
    name: str
    port: str
    """The board's port (or place) as given to `bootlab tune`."""
    goal: str
    """The goal milestone's name (`login`)."""
    budget_s: float | None = None
    """Stop once the goal's median is at or below this; None: cut as far as possible."""
    max_hours: float | None = None
    """Stop after this long; None: no time limit."""
    persist: bool = False
    """Kept settings are `saveenv`ed (else only set for each boot, the flash untouched)."""
    env_backup: dict[str, str] = field(default_factory=dict)
    """`printenv` before the first change: what `--restore` puts back."""
    kept: list[str] = field(default_factory=list)
    """The spec items kept, in the order they were kept."""
    steps: list[TuneStep] = field(default_factory=list)
    baseline: list[str] = field(default_factory=list)
    """The baseline boots' session file names (in the state's folder)."""
    final: list[str] = field(default_factory=list)
    """The session file names of the boots with every kept setting (the last step's)."""
    rebuild: list[tuple[str, float]] = field(default_factory=list)
    """(title, predicted ms) of savings that need a rebuild: listed, never applied."""
    commands: list[str] = field(default_factory=list)
    """The exact U-Boot commands that set the final configuration by hand."""
    finished: bool = False
    stopped_why: str = ""
    """Why the tune stopped, in words (empty while it runs)."""

    def spec(self) -> str:
        """The kept settings as one variant spec (`abplan.parse_spec` reads it)."""
        return format_spec(parse_spec(",".join(self.kept)))

    def tried(self) -> set[str]:
        """The settings already tried (or being tried) by a step."""
        return {step.setting for step in self.steps}

    def to_json(self) -> dict[str, Any]:
        """The state as JSON-ready data."""
        return {
            "format": STATE_FORMAT, "version": STATE_VERSION, "name": self.name,
            "port": self.port, "goal": self.goal, "budget_s": self.budget_s,
            "max_hours": self.max_hours, "persist": self.persist,
            "env_backup": self.env_backup, "kept": self.kept,
            "steps": [step.to_json() for step in self.steps],
            "baseline": self.baseline, "final": self.final,
            "rebuild": [[title, ms] for title, ms in self.rebuild],
            "commands": self.commands, "finished": self.finished,
            "stopped_why": self.stopped_why,
        }

    def save(self) -> None:
        """Write the state atomically (`files.atomic`)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: Path) -> TuneState:
        """Read a state file.

        Raises:
            TuneStateError: it cannot be read or is not a consistent tune state.
        """
        advice = ("restore the board with `bootlab tune PORT --restore` if needed, then "
                  "delete it or choose another --name")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise TuneStateError(f"{path}: cannot read: {error.strerror or error}") from None
        except ValueError as error:
            raise TuneStateError(f"{path}: not a readable tune state ({error}); {advice}") \
                from None
        try:
            return cls._from_json(path, data)
        except (KeyError, TypeError, ValueError, SpecError) as error:
            reason = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise TuneStateError(f"{path}: not a valid tune state ({reason}); {advice}") \
                from None

    @classmethod
    def _from_json(cls, path: Path, data: Any) -> TuneState:
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise ValueError(f"no '{STATE_FORMAT}' format field")
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"format version {data.get('version')!r}, this bootlab reads "
                             f"{STATE_VERSION}")
        backup = data["env_backup"]
        if not isinstance(backup, dict):
            raise TypeError("env_backup is not an object")
        budget, hours = data.get("budget_s"), data.get("max_hours")
        state = cls(
            path, str(data["name"]), str(data["port"]), str(data["goal"]),
            None if budget is None else float(budget), None if hours is None else float(hours),
            bool(data["persist"]), {str(k): str(v) for k, v in backup.items()},
            [str(item) for item in data["kept"]],
            [TuneStep.from_json(step) for step in data["steps"]],
            [str(s) for s in data["baseline"]], [str(s) for s in data["final"]],
            [(str(title), float(ms)) for title, ms in data["rebuild"]],
            [str(c) for c in data.get("commands", [])],
            bool(data["finished"]), str(data["stopped_why"]))
        state.spec()
        return state


@dataclass(frozen=True)
class TuneBaseline:
    """The board as it is was measured: `boots` boots, the goal's median time."""

    boots: int
    median_s: float


@dataclass(frozen=True)
class TuneRanked:
    """The candidates left, best predicted first: (setting, title, predicted ms)."""

    candidates: list[tuple[str, str, float]]


@dataclass(frozen=True)
class TuneStepStarted:
    """A step's A/B run is about to start (its outcome is "running")."""

    step: TuneStep


@dataclass(frozen=True)
class TuneStepDone:
    """A step was decided: kept, rejected or harmful."""

    step: TuneStep


@dataclass(frozen=True)
class TuneFinished:
    """The tune stopped (`state.stopped_why` says why)."""

    state: TuneState


TuneEvent = TuneBaseline | TuneRanked | TuneStepStarted | TuneStepDone | TuneFinished
"""Every event a tune reports (the loop also forwards `control.abrun` events)."""
