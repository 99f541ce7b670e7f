"""The report's honest states and numbers (issue 26, point 8), over the bundled boots: its
comparison in time order, a headline that trusts a measurement over the prediction it
contradicts (and says why), a header naming the board and date, a text column that wraps at
spaces, and phases coloured by the stage the boot has reached."""

from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.paths import example_sessions

from bootlab.commands import report as report_cmd
from bootlab.commands.common import source_info
from bootlab.commands.parsers import add_report_parsers
from bootlab.core.analysis.loading import load
from bootlab.core.analysis.profiles import STAGES
from bootlab.core.capture.sources import open_source
from bootlab.core.render.recommendations import UNEXPLAINED
from bootlab.core.render.report import Part, Report, render, waterfalls
from bootlab.core.render.svg import COLOURS

ALL = example_sessions()
SVG = "{http://www.w3.org/2000/svg}"


def report_file(tmp_path: Path, fmt: str, paths: list[Path] = ALL) -> str:
    """`bootlab report PATHS --format FMT` (the advice engine's recommendations included)."""
    parser = argparse.ArgumentParser(prog="bootlab")
    add_report_parsers(parser.add_subparsers(dest="command"))
    out = tmp_path / f"report.{fmt}"
    args = parser.parse_args(["report", *map(str, paths), "--format", fmt, "-o", str(out)])
    assert report_cmd.run_report(args) == 0
    return out.read_text(encoding="utf-8")


def page_root(page: str) -> ET.Element:
    return ET.fromstring(page.split("\n", 1)[1])


def text_of(element: ET.Element) -> str:
    return "".join(element.itertext())


def parts(paths: list[Path] = ALL) -> list[Part]:
    out = []
    for path in paths:
        loaded = load(path)
        out.append(Part(path.name, source_info(loaded.source), loaded.analysis))
    return out


def in_time_order(ids: list[str], medians: list[dict[str, float]]) -> None:
    """Each column's medians rise down the listed milestones."""
    for column in medians:
        times = [column[m] for m in ids if m in column]
        assert times == sorted(times), (ids, column)


def test_html_comparison_lists_milestones_in_time_order(tmp_path: Path) -> None:
    data = json.loads(report_file(tmp_path, "json"))["comparison"]
    timed = [m for m in data["milestones"] if m["kind"] == "milestone"]
    ids = [m["id"] for m in timed]
    medians = [{m["id"]: m["columns"][i]["median_s"] for m in timed
                if m["columns"][i]} for i in range(len(data["columns"]))]
    in_time_order(ids, medians)
    root = page_root(report_file(tmp_path, "html"))
    section = next(s for s in root.iter("section") if s.get("id") == "comparison")
    rows = [text_of(tr.find("td")) for tr in section.iter("tr") if tr.find("td") is not None]
    assert rows[:len(ids)] == ids
    assert rows.index("kernel_done") < rows.index("root_mounted")  # the example


def test_headline_trusts_the_measurement_that_contradicts_the_prediction(
        tmp_path: Path) -> None:
    data = json.loads(report_file(tmp_path, "json"))
    comparison = {m["id"]: m for m in data["comparison"]["milestones"]}
    names = [c["name"] for c in data["comparison"]["columns"]]
    root = page_root(report_file(tmp_path, "html"))
    items = {text_of(li.find("strong")): li for li in root.iter("li")
             if li.find("strong") is not None}
    contradicted = [r for r in data["recommendations"] if r["trust"] == "measurement"]
    assert contradicted, "the quiet boots measure less than the console prediction"
    for rec in contradicted:
        measured, predicted = rec["measured"], rec["predicted_ms"]
        assert not measured["low_ms"] <= predicted <= measured["high_ms"]
        cell = comparison[measured["milestone"]]["columns"][names.index(measured["variant"])]
        assert measured["saving_ms"] == pytest.approx(-cell["difference"]["mean_ms"], abs=0.1)
        spans = {span.get("class"): text_of(span) for span in items[rec["title"]].iter("span")}
        assert spans["saving"].startswith(f"measured saving {measured['saving_ms']:.0f} ms")
        assert f"{predicted:.0f}" not in spans["saving"]  # never the headline number
        assert spans["trust"].startswith("Trust the measurement")
        assert f"predicted {predicted:.0f} ms" in spans["trust"] and rec["why"] in spans["trust"]
    console = next(r for r in contradicted if r["measured"]["variant"] == "quiet")
    assert "faster than its baud" in console["why"]  # the console outran its baud rate
    markdown = report_file(tmp_path, "markdown")
    assert f"Trust the measurement: the predicted {console['predicted_ms']:.0f} ms" in markdown


def test_headline_keeps_a_prediction_its_measurement_agrees_with(tmp_path: Path) -> None:
    data = json.loads(report_file(tmp_path, "json"))
    agreed = [r for r in data["recommendations"]
              if r["measured"] is not None and r["trust"] == "prediction"]
    assert agreed, "bootdelay0 measures what the countdown predicts"
    root = page_root(report_file(tmp_path, "html"))
    items = {text_of(li.find("strong")): li for li in root.iter("li")
             if li.find("strong") is not None}
    for rec in agreed:
        assert rec["measured"]["low_ms"] <= rec["predicted_ms"] <= rec["measured"]["high_ms"]
        spans = {span.get("class"): text_of(span) for span in items[rec["title"]].iter("span")}
        assert spans["saving"].startswith(f"predicted saving {rec['predicted_ms']:.0f} ms")
        assert "measured saving" in spans["saving"] and "trust" not in spans


@dataclass
class Advice:
    """A recommendation as any advice engine may give it: no reason for a miss known."""

    title: str
    predicted_ms: float
    variant: str
    milestone: str
    evidence: Any = None


def test_a_contradicted_prediction_without_a_known_reason_says_so() -> None:
    report = Report(parts(), [Advice("Hush the kernel", 5000.0, "quiet", "login")])
    root = page_root(render(report, "html"))
    spans = {span.get("class"): text_of(span) for span in root.iter("span")}
    assert spans["saving"].startswith("measured saving")
    assert spans["trust"].endswith(f"as {UNEXPLAINED}.")
    (rec,) = json.loads(render(report, "json"))["recommendations"]
    assert rec["trust"] == "measurement" and rec["measured"]["variant"] == "quiet"


def test_header_names_the_board_and_the_date_of_the_boots(tmp_path: Path) -> None:
    metas = [open_source(path).meta for path in ALL]
    boards = {meta["board"] for meta in metas}
    days = sorted({meta["started_iso"][:10] for meta in metas})
    root = page_root(report_file(tmp_path, "html"))
    for heading in (text_of(next(root.iter("h1"))), text_of(next(root.iter("title")))):
        assert all(board in heading for board in boards)
        assert days[0] in heading and days[-1] in heading
    first = report_file(tmp_path, "markdown").splitlines()[0]
    assert first.startswith("# Boot report: ") and days[0] in first
    assert all(board in first for board in boards)


def test_text_column_wraps_at_spaces_not_mid_word(tmp_path: Path) -> None:
    root = page_root(report_file(tmp_path, "html"))
    css = text_of(next(root.iter("style")))
    rules = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", css))
    assert "td code" in {selector.strip() for selector in rules}
    assert "break-all" not in css and "anywhere" not in css
    code = next(body for selector, body in rules.items() if selector.strip() == "td code")
    assert "overflow-wrap:break-word" in code and "white-space:pre-wrap" in code
    assert any(td.find("code") is not None for td in root.iter("td"))  # the text column


def test_phases_are_coloured_by_the_stage_the_boot_has_reached(tmp_path: Path) -> None:
    for part in parts():
        for boot, bars in waterfalls(part):
            kinds = [STAGES.index(bar.kind) for bar in bars]
            assert kinds == sorted(kinds), [(b.label, b.kind) for b in bars]  # never back
            entered = next(m.id for m in boot.milestones if m.stage == "userspace")
            start = next(i for i, bar in enumerate(bars) if bar.label.startswith(f"{entered} →"))
            assert bars[start:] and {bar.kind for bar in bars[start:]} == {"userspace"}
    root = page_root(report_file(tmp_path, "html"))
    fills = {rect.get("fill") for rect in root.iter(f"{SVG}rect")
             if text_of(rect).startswith("root_mounted → login")}
    assert fills == {COLOURS["userspace"]}  # the example

