"""A report's recommendations, apart from how a report lays them out: each as data
(`recommendation_json`; recommendations are duck-typed: `title`, `predicted_ms`, `evidence` ...),
what the report's inputs measured of one (`Measured`), and its headline figure, the
measurement when its interval excludes the prediction (`headline`). `report` shows them in
Markdown, HTML and JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bootlab.core.analysis.stats import Difference, boots_text
from bootlab.core.capture.text import clean


@dataclass(frozen=True)
class Measured:
    """A recommendation's variant measured against the base by the report's inputs."""

    variant: str
    base: str
    milestone: str
    difference: Difference
    """The variant minus the base at `milestone` (seconds)."""

    @property
    def saving_ms(self) -> tuple[float, float, float]:
        """The saving measured (positive: faster) and its interval's ends, in ms."""
        diff = self.difference
        return -diff.mean * 1000.0, -diff.high * 1000.0, -diff.low * 1000.0

    def contradicts(self, predicted_ms: float) -> bool:
        """The measured interval excludes the predicted saving."""
        _, low, high = self.saving_ms
        return not low <= predicted_ms <= high

    def text(self) -> str:
        """`measured saving 151 ms, none shown (95% CI -246..+549 ms; quiet against default
        to login, 2+2 boots)`."""
        saving, low, high = self.saving_ms
        diff = self.difference
        spread = "every boot identical" if diff.degenerate else \
            f"{diff.level * 100:.4g}% CI {low:+.0f}..{high:+.0f} ms"
        return (f"measured saving {saving:.0f} ms" + ("" if diff.shown else ", none shown")
                + f" ({spread}; {self.variant} against {self.base} to {self.milestone}, "
                f"{boots_text(diff)})")

    def to_json(self) -> dict[str, Any]:
        """The measurement as data (ms; positive: a saving)."""
        saving, low, high = self.saving_ms
        diff = self.difference
        return {"variant": self.variant, "base": self.base, "milestone": self.milestone,
                "saving_ms": round(saving, 1), "low_ms": round(low, 1),
                "high_ms": round(high, 1), "level": diff.level, "shown": diff.shown,
                "boots": [diff.n_a, diff.n_b]}


def evidence_lines(recommendation: Any) -> list[str]:
    """A recommendation's evidence as cleaned lines of text.

    `evidence` may be a string, or items that are strings, (line number, text) pairs, or have
    `text` (and `line`); items with no text left after cleaning are left out.
    """
    evidence = getattr(recommendation, "evidence", None)
    items: Iterable[Any] = [evidence] if isinstance(evidence, str) else evidence or []
    out = []
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:
            line, text = item
        else:
            line, text = getattr(item, "line", None), getattr(item, "text", item)
        text = clean(str(text)).strip()
        if text:
            out.append((f"line {line}: " if isinstance(line, int) else "") + text)
    return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def recommendation_json(recommendation: Any, measured: Measured | None = None) -> dict[str, Any]:
    """title, predicted_ms (with low_ms, high_ms over several boots), detail, evidence, the
    `bootlab ab` command that would measure it (each when the recommendation has it), what
    the inputs `measured` of it, and which to trust: "measurement" when its interval
    excludes the prediction (`why` says why the prediction missed), else "prediction"."""
    detail = getattr(recommendation, "detail", None)
    command = getattr(recommendation, "ab_command", None)
    caveat = getattr(recommendation, "caveat", None)
    ab = command() if callable(command) else None
    predicted = _number(getattr(recommendation, "predicted_ms", None))
    against = measured is not None and predicted is not None and measured.contradicts(predicted)
    return {"title": clean(str(getattr(recommendation, "title", recommendation))),
            "predicted_ms": predicted,
            "low_ms": _number(getattr(recommendation, "low_ms", None)),
            "high_ms": _number(getattr(recommendation, "high_ms", None)),
            "detail": clean(detail) if isinstance(detail, str) else "",
            "evidence": evidence_lines(recommendation),
            "ab_command": clean(ab) if isinstance(ab, str) else None,
            "measured": None if measured is None else measured.to_json(),
            "trust": "measurement" if against else "prediction",
            "why": clean(caveat if isinstance(caveat, str) and caveat else UNEXPLAINED)
            if against else ""}


UNEXPLAINED = ("the prediction models the log of a boot, while the A/B run timed the boots "
               "themselves")
"""Why a contradicted prediction missed, when its recommendation names no reason."""


def _saving(data: dict[str, Any]) -> str:
    """`predicted saving 548 ms (412-601 ms)`, or ''."""
    if data["predicted_ms"] is None:
        return ""
    text = f"predicted saving {data['predicted_ms']:.0f} ms"
    low, high = data["low_ms"], data["high_ms"]
    if low is not None and high is not None and low != high:
        text += f" ({low:.0f}-{high:.0f} ms)"
    return text


def headline(data: dict[str, Any], measured: Measured | None) -> tuple[str, str]:
    """A recommendation's headline figure, and which figure to trust and why ('' unless its
    measurement contradicts its prediction: then the measurement is the headline, never the
    prediction)."""
    saving = _saving(data)
    if measured is None:
        return saving, ""
    if data["trust"] != "measurement":
        return "; ".join(t for t in (saving, measured.text()) if t), ""
    return measured.text(), (f"Trust the measurement: the predicted {data['predicted_ms']:.0f} "
                             f"ms is outside its interval, as {data['why']}.")
