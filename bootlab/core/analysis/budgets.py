"""Boot-time budgets: per-milestone targets, pass or fail per boot, and JUnit XML for CI.

Products have requirements such as "display up within 5 s of power-on"; a budget file states
them per milestone, and `bootlab check` turns a bench or CI job into a regression gate:

```toml
[budgets]
login = 5.0                      # seconds from the boot's first byte
init = "3s"                      # or "3000ms"
"probe:mem.used_kb" = 30000      # a post-boot probe figure, in its own unit
"unit:multi-user.target" = "25s" # a systemd unit ready (its status line: `analysis.units`)
```

A milestone a boot never reached fails its budget. Files that cannot be used are reported with
file and line, so the CI log points at the mistake.
"""

from __future__ import annotations

import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bootlab.core.analysis.compare import PROBE
from bootlab.core.analysis.phases import Boot, axis_zero, phase_rows
from bootlab.core.analysis.ready import READY_PREFIX
from bootlab.core.analysis.units import UNIT_NAME, UNIT_PREFIX
from bootlab.core.files.config import config_dir
from bootlab.core.files.errors import LocatedError, toml_error_line, toml_line, unknown_key

DEFAULT_FILE = "budgets.toml"
"""Looked for in the config folder when no budget file is named."""
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)?\s*\Z")
_TOML_LINE = re.compile(r"\(at line \d+, column \d+\)")


class BudgetError(LocatedError):
    """A budget file could not be used; the message says where (file:line) and why."""


@dataclass(frozen=True, slots=True)
class Budget:
    """One target: a milestone (seconds) or a probe figure (its own unit) at most `limit`."""

    target: str
    limit: float
    line: int | None = None

    @property
    def probe(self) -> bool:
        """A post-boot probe figure rather than a milestone time."""
        return self.target.startswith(PROBE)

    def show(self, value: float) -> str:
        """A value in this budget's unit: `5.000 s`, or a probe figure as it is."""
        return f"{value:g}" if self.probe else f"{value:.3f} s"


@dataclass(frozen=True, slots=True)
class BudgetFile:
    """The budgets read from one file."""

    path: str
    budgets: tuple[Budget, ...]


def _limit(key: str, value: object, fail: BudgetError) -> float:
    if isinstance(value, bool):
        raise fail
    if isinstance(value, int | float):
        limit = float(value)
    elif isinstance(value, str) and not key.startswith(PROBE) \
            and (match := _DURATION.match(value)):
        limit = float(match.group(1)) / (1000.0 if match.group(2) == "ms" else 1.0)
    else:
        raise fail
    if not limit > 0:
        raise fail
    return limit


def parse_budgets(text: str, source: str = "<string>") -> BudgetFile:
    """Read budgets from TOML text.

    Raises:
        BudgetError: not TOML, no [budgets] table, or a value that is not a positive duration.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        reason = _TOML_LINE.sub("", str(error)).strip()
        raise BudgetError(source, toml_error_line(error), f"not valid TOML: {reason}") from None
    unknown = unknown_key(data, ("budgets",))
    if unknown is not None:
        hint = "" if isinstance(data[unknown], dict) else "; write targets under [budgets]"
        raise BudgetError(source, toml_line(text, (unknown,)),
                          f"unknown table or key {unknown!r}: only [budgets] is read{hint}")
    table = data.get("budgets")
    if not isinstance(table, dict) or not table:
        raise BudgetError(source, toml_line(text, ("budgets",)),
                          "no [budgets] table with at least one target, e.g. "
                          "[budgets] login = 5.0")
    budgets = []
    for key, value in table.items():
        line = toml_line(text, ("budgets", key))
        unit = "a number in the probe's own unit" if key.startswith(PROBE) else \
            'seconds (5.0) or a duration string ("3s", "1500ms")'
        fail = BudgetError(source, line, f"budget {key} = {value!r}: expected {unit}, above 0")
        budgets.append(Budget(key, _limit(key, value, fail), line))
    return BudgetFile(source, tuple(budgets))


def load_budgets(path: Path) -> BudgetFile:
    """Read a budget file.

    Raises:
        BudgetError: it cannot be read or used.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else str(error)
        raise BudgetError(str(path), None, f"cannot read: {reason or error}") from None
    return parse_budgets(text, str(path))


def find_budget_file(name: str | None) -> Path:
    """The budget file meant: a path as given, else `<config>/budgets/NAME.toml`, and
    `<config>/budgets.toml` when no name is given.

    Raises:
        BudgetError: there is no such file.
    """
    if name is None:
        path = config_dir() / DEFAULT_FILE
        if not path.is_file():
            raise BudgetError(str(path), None, "no budget file: give --budget FILE or create "
                                               "this one")
        return path
    given = Path(name)
    if given.is_file():
        return given
    named = config_dir() / "budgets" / f"{name}.toml"
    if given.parent == Path(".") and named.is_file():
        return named
    raise BudgetError(name, None, f"no such budget file (nor {named})")


def validate(budgets: BudgetFile, milestones: Collection[str]) -> None:
    """Check every milestone budget names a milestone the profile knows, or a systemd unit
    (`unit:NAME`, ready when its status line says so).

    Raises:
        BudgetError: one does not (a typo would otherwise fail every boot).
    """
    for budget in budgets.budgets:
        if budget.target.startswith(UNIT_PREFIX) and not UNIT_NAME.fullmatch(
                budget.target[len(UNIT_PREFIX):]):
            raise BudgetError(budgets.path, budget.line,
                              f"{budget.target!r} does not name a systemd unit (such as "
                              "unit:multi-user.target)")
        if not budget.probe and budget.target not in milestones \
                and not budget.target.startswith((UNIT_PREFIX, READY_PREFIX)):
            raise BudgetError(budgets.path, budget.line,
                              f"no milestone {budget.target!r} in the profile; known: "
                              f"{', '.join(sorted(milestones))}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One budget checked on one boot."""

    budget: Budget
    measured: float | None
    """Seconds from the boot's first byte (or the probe figure); None: never reached."""
    incomplete: str | None = None
    """Reached, but not measured: the boot has a gap (`analysis.gaps`) across which its time
    is not known."""

    @property
    def passed(self) -> bool:
        """Reached, and within the budget."""
        return self.measured is not None and self.measured <= self.budget.limit

    @property
    def margin(self) -> float | None:
        """Budget minus measured: the headroom (negative: over budget)."""
        return None if self.measured is None else self.budget.limit - self.measured

    def message(self) -> str:
        """The verdict in words, stating measured and budget."""
        budget, show = self.budget, self.budget.show
        if self.incomplete is not None:
            return f"{budget.target} not measured: the boot is {self.incomplete}"
        if self.measured is None:
            what = "was not measured" if budget.probe else "was never reached"
            return f"{budget.target} {what} (budget {show(budget.limit)})"
        margin = budget.limit - self.measured
        if self.passed:
            return (f"{budget.target} at {show(self.measured)}, within its "
                    f"{show(budget.limit)} budget ({show(margin)} to spare)")
        return (f"{budget.target} at {show(self.measured)}, over its {show(budget.limit)} "
                f"budget by {show(-margin)}")


def evaluate(budgets: BudgetFile, boot: Boot, figures: Mapping[str, float] | None = None,
             reference: str = "first-byte") -> list[Verdict]:
    """Check a boot against every budget (milestones: elapsed time to their first occurrence)."""
    reached: dict[str, float] = {}
    rows = phase_rows(boot, reference)
    for row in rows:
        if row.elapsed_s is not None:
            reached.setdefault(row.milestone.id, row.elapsed_s)
    zero = axis_zero(rows)
    if zero is not None and boot.gap is None:  # a unit ready, on the table's axis
        for step in boot.units:
            if step.ready_s is not None and UNIT_NAME.fullmatch(step.name):
                reached.setdefault(UNIT_PREFIX + step.name, step.ready_s - zero)
    probes = figures or {}
    return [Verdict(b, probes.get(b.target[len(PROBE):]) if b.probe else reached.get(b.target),
                    boot.incomplete if not b.probe and b.target not in reached
                    and boot.reached(b.target) is not None else None)
            for b in budgets.budgets]


@dataclass(frozen=True, slots=True)
class BootResult:
    """The verdicts of one boot of one session."""

    session: str
    boot: int
    verdicts: tuple[Verdict, ...]

    @property
    def passed(self) -> bool:
        """Every budget met."""
        return all(v.passed for v in self.verdicts)


def junit_xml(results: Sequence[BootResult], name: str = "bootlab check") -> str:
    """JUnit XML: a test suite per session boot, a test case per budget, failures stating
    measured against budget (what CI servers show for a failed test)."""
    root = ET.Element("testsuites", name=name, tests=str(sum(len(r.verdicts) for r in results)),
                      failures=str(sum(not v.passed for r in results for v in r.verdicts)))
    for result in results:
        boot = f"#{result.boot}" if result.boot > 1 else ""
        suite = ET.SubElement(root, "testsuite", name=Path(result.session).name + boot,
                              tests=str(len(result.verdicts)),
                              failures=str(sum(not v.passed for v in result.verdicts)))
        for verdict in result.verdicts:
            budget = verdict.budget
            # CI servers read dots in a class name as packages: the file's stem has none.
            case = ET.SubElement(suite, "testcase",
                                 classname=f"bootlab.{Path(result.session).stem}{boot}",
                                 name=f"{budget.target} <= {budget.show(budget.limit)}")
            if verdict.measured is not None and not budget.probe:
                case.set("time", f"{verdict.measured:.6f}")
            if not verdict.passed:
                failure = ET.SubElement(case, "failure", message=verdict.message(),
                                        type="missing" if verdict.measured is None else "budget")
                failure.text = verdict.message()
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
