"""The tune report (`bootlab report tune-NAME.json`): the result, the before/after waterfall of
real QEMU-board sessions, the steps, what was rejected and why, the rebuild list, the commands;
hostile text escaped; the HTML rendered by headless Chromium."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from support.paths import example_sessions
from test_report import (
    ALLOWED_TAGS,
    CHROMIUM,
    REQUIRE_CHROMIUM,
    SVG,
    chromium,
    cli,
    png_pixels,
    svg_title,
)

from bootlab.core.board.tuneplan import TuneState, TuneStep
from bootlab.core.render import tables
from bootlab.core.render.tune_report import load_tune_report, render

DEFAULT = example_sessions("default")
BOOTDELAY0 = example_sessions("bootdelay0")
HOSTILE = "<script>alert(1)</script>\x1b]0;pwned\x07"
COMMANDS = ["setenv bootdelay 0", "setenv bootargs 'console=ttyAMA0,115200 root=/dev/vda2 "
            "rootfstype=ext4 ro rootwait quiet'", "saveenv"]


def tune_state(folder: Path) -> TuneState:
    """A finished tune: bootdelay=0 kept (baseline: the default sessions, final: the
    bootdelay0 ones, copied beside the state), quiet rejected, a wrong rootfstype harmful."""
    for path in [*DEFAULT, *BOOTDELAY0]:
        shutil.copy(path, folder)
    steps = [
        TuneStep("bootdelay=0", "Set bootdelay=0", 2000.0, "tune-bootdelay0", "kept",
                 "saves 2046 ms, interval below zero, in force", 2046.0, 1990.0, 2100.0, 3,
                 ("bootdelay0: bootdelay=0 in force, 3 of 3 boots: 'no autoboot countdown'",)),
        TuneStep("quiet", f"Boot with quiet {HOSTILE}", 548.0, "tune-quiet", "rejected",
                 f"no saving shown: interval crosses zero {HOSTILE}", 12.0, -30.0, 50.0, 5),
        TuneStep("rootfstype=vfat", "Name the root file system", 20.0, "tune-rootfs", "harmful",
                 "login not reached: undone by a power cycle", None, None, None, 1),
    ]
    state = TuneState(folder / "tune-bench.json", "bench", "/dev/ttyUSB0", "login",
                      budget_s=4.0, persist=True, env_backup={"bootdelay": "2"},
                      kept=["bootdelay=0"], steps=steps,
                      baseline=[p.name for p in DEFAULT], final=[p.name for p in BOOTDELAY0],
                      rebuild=[("Kernel config: drop unused drivers", 830.0)],
                      commands=COMMANDS, finished=True, stopped_why="the budget was met")
    state.save()
    return state


def test_report_result_and_waterfall_from_the_sessions(tmp_path: Path) -> None:
    report = load_tune_report(tune_state(tmp_path))
    assert report.problems == []
    assert len(report.before.reached) == 2 and len(report.after.reached) == 2
    before, after = report.before.median_s, report.after.median_s
    assert before is not None and after is not None
    assert 5.3 < before < 5.6 and 3.3 < after < 3.5          # the autoboot's 2 s gone
    cut = report.cut_ms()
    assert cut is not None and 1900 < cut < 2200
    drawn = report.waterfall()
    assert [side for side, _, _ in drawn] == ["before", "after"]
    assert drawn[0][1].name in {p.name for p in DEFAULT}
    assert drawn[1][1].name in {p.name for p in BOOTDELAY0}
    lo, hi = report.axis()
    assert lo == 0.0 and hi == pytest.approx(max(bar.end for _, _, bars in drawn
                                                 for bar in bars))


def test_markdown_shows_steps_rejections_rebuilds_and_commands(tmp_path: Path) -> None:
    md = render(load_tune_report(tune_state(tmp_path)), "markdown")
    assert md.startswith("# Tune report: bench\n")
    assert "- total cut: 2" in md and "- budget 4 s: met" in md
    assert "- kept 1 of 3 steps, measured savings adding up to 2046 ms: bootdelay=0" in md
    assert "### Before: 2026" in md and "### After: 2026" in md
    assert "| 1 | `bootdelay=0` | Set bootdelay=0 | 2000 ms | 2046 ms \\[1990, 2100\\] | 3 " \
        "| kept |" in md
    assert "| 3 | `rootfstype=vfat` | Name the root file system | 20 ms | - | 1 | harmful |" in md
    assert "- `bootdelay0: bootdelay=0 in force, 3 of 3 boots: 'no autoboot countdown'`" in md
    assert "## Rejected and harmful" in md
    assert "- `rootfstype=vfat` harmful: login not reached: undone by a power cycle" in md
    assert "- Kernel config: drop unused drivers: predicted saving 830 ms" in md
    assert "```text\n" + "\n".join(COMMANDS) + "\n```" in md
    assert "\x1b" not in md and "\x07" not in md and "pwned" not in md
    assert "\\<script\\>alert(1)\\</script\\>" in md
    assert not re.search(r"(?<!\\)<", md)                  # no markup, every < escaped


def test_html_is_self_contained_with_two_waterfalls_on_one_axis(tmp_path: Path) -> None:
    report = load_tune_report(tune_state(tmp_path))
    page = render(report, "html")
    root = ET.fromstring(page.split("\n", 1)[1])
    assert {el.tag for el in root.iter()} <= ALLOWED_TAGS
    charts = list(root.iter(f"{SVG}svg"))
    assert [svg_title(s).split(":")[0] for s in charts] == ["before", "after"]
    for svg, (_, part, _) in zip(charts, report.waterfall(), strict=True):
        phases = [p for p in tables.to_json(part.analysis)["phases"]
                  if p["boot"] == 1 and p["start_s"] is not None and p["end_s"] is not None]
        assert len(svg.findall(f"{SVG}rect")) == len(phases) >= 10
    ticks = {tuple(t.text for t in s.iter(f"{SVG}text") if t.get("text-anchor") == "middle")
             for s in charts}
    assert len(ticks) == 1
    text = "".join(root.itertext())
    assert "<script>alert(1)</script>" in text and "pwned" not in page
    assert "<script" not in page and "\x1b" not in page
    assert "Needs a rebuild" in text and "predicted saving 830 ms" in text
    assert all(command in text for command in COMMANDS)
    assert "harmful: login not reached" in text


def test_json_and_csv(tmp_path: Path) -> None:
    report = load_tune_report(tune_state(tmp_path))
    data = json.loads(render(report, "json"))
    assert data["format"] == "bootlab-tune-report" and "env_backup" not in data["tune"]
    assert [s["outcome"] for s in data["tune"]["steps"]] == ["kept", "rejected", "harmful"]
    assert len(data["before"]["sessions"]) == 2 and data["cut_ms"] == report.cut_ms()
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert [(r["setting"], r["saving_ms"], r["low_ms"]) for r in rows] == [
        ("bootdelay=0", "2046", "1990"), ("quiet", "12", "-30"), ("rootfstype=vfat", "", "")]


def test_unfinished_tune_with_a_missing_session(tmp_path: Path) -> None:
    state = tune_state(tmp_path)
    (tmp_path / state.final[0]).unlink()
    state.finished, state.stopped_why, state.commands = False, "", []
    report = load_tune_report(state)
    assert len(report.problems) == 1 and state.final[0] in report.problems[0]
    assert len(report.after.parts) == 1                      # the other one still counts
    md = render(report, "markdown")
    assert "- not finished (running, or interrupted: it resumes where it stopped)" in md
    assert "Nothing was kept: the board's configuration is unchanged." in md


def test_cli_reports_a_tune_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tune_state(tmp_path)
    out = tmp_path / "tune.html"
    assert cli("report", str(state.path), "--format", "html", "-o", str(out)) == 0
    assert "Tune report: bench" in out.read_text()
    assert cli("report", str(state.path)) == 0
    assert capsys.readouterr().out.startswith("# Tune report: bench")
    assert cli("report", str(state.path), str(DEFAULT[0])) == 2
    assert "reported on its own" in capsys.readouterr().err
    bad = tmp_path / "tune-bad.json"
    bad.write_text('{"format": "bootlab-ab"}')
    assert cli("report", str(bad)) == 2
    assert "not a valid tune state" in capsys.readouterr().err


@pytest.mark.skipif(CHROMIUM is None and not REQUIRE_CHROMIUM,
                    reason="chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_tune_report(tmp_path: Path) -> None:
    report = load_tune_report(tune_state(tmp_path))
    page = tmp_path / "tune.html"
    page.write_text(render(report, "html"))
    dom = chromium(tmp_path, page, "--dump-dom").stdout.decode()
    body = dom[dom.index("<body"):]
    assert body.count("<svg") == 2
    assert body.count("<rect") == sum(len(bars) for _, _, bars in report.waterfall())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script" not in body
    shot = tmp_path / "shot.png"
    chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1200,1400")
    width, height, rows = png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 1400)
    pixels = Counter(row[i:i + 3] for row in rows for i in range(0, len(row), 3))
    # both waterfalls drawn in their stage colours: U-Boot's and the kernel's bars
    assert pixels[bytes.fromhex("d9892b")] > 200 and pixels[bytes.fromhex("3a78c9")] > 200
