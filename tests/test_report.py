"""Reports: Markdown, self-contained HTML with SVG charts, CSV and JSON; hostile device text;
`bootlab report` and `bootlab initcalls`; the HTML rendered by headless Chromium."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.paths import example_sessions

from bootlab.commands import report as report_cmd
from bootlab.commands.parsers import add_report_parsers
from bootlab.core.analysis.initcalls import parse
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import SessionWriter
from bootlab.core.capture.sources import open_source
from bootlab.core.render import tables
from bootlab.core.render.report import Part, Report, render, to_json

DEFAULT = example_sessions("default")
QUIET = example_sessions("quiet")
QEMU_LOG = Path(__file__).parent / "data" / "initcall-qemu.log"
SVG = "{http://www.w3.org/2000/svg}"
HOSTILE_LABEL = '=1+1"><img src=x onerror=alert(1)>'
OSC = b"\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07"
HOSTILE_LINES = [
    (0.00, b'U-Boot 2023.01"><img src=x onerror=alert(1)> (evil)'),
    (0.20, b"Hit any key to stop autoboot:  0"),
    (0.90, b"Starting kernel ..."),
    (1.50, b"[    0.000000] Booting Linux on physical CPU 0x0 <script>alert(1)</script>"),
    (1.60, b"[    0.100000] calling  <script>alert(2)</script>+0x0/0x28 @ 1"),
    (1.70, b"[    0.204000] initcall <script>alert(2)</script>+0x0/0x28 returned 0 after "
           b"104000 usecs"),
    (1.80, b"[    0.300000] calling  inet_init+0x0/0x2a4 @ 1"),
    (1.90, b"[    0.343800] initcall inet_init+0x0/0x2a4 returned 0 after 43800 usecs"),
    (2.50, b"[    1.000000] Run /init as init process " + OSC),
    (3.00, OSC + b"<b>evil</b>\x1b[2J login: "),
]
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p",
                "section", "div", "table", "thead", "tbody", "tr", "th", "td", "code", "ul",
                "ol", "li", "strong", "span", "details", "summary",
                f"{SVG}svg", f"{SVG}title", f"{SVG}text",
                f"{SVG}line", f"{SVG}rect"}


def write_session(path: Path, lines: Sequence[tuple[float, bytes]],
                  meta: dict[str, Any]) -> Path:
    writer = SessionWriter(path, {"profile": "linux", **meta})
    for t, line in lines:
        writer.rx(line + b"\n", int(t * 1e9))
    writer.close(int(lines[-1][0] * 1e9) + 1)
    return path


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return write_session(tmp_path / "hostile.jsonl", HOSTILE_LINES,
                         {"label": HOSTILE_LABEL, "board": "<script>alert('board')</script>"})


def part(path: Path) -> Part:
    source = open_source(path)
    analysis = analyze(source.data, load_profile("linux", []), source.line_time)
    info: dict[str, Any] = {"path": str(path), "kind": source.kind,
                            **{k: source.meta[k] for k in ("label", "board")
                               if k in source.meta}}
    return Part(path.name, info, analysis, None, parse(source.data))


@dataclass
class Evidence:
    line: int
    text: str


@dataclass
class Advice:
    title: str
    predicted_ms: float
    evidence: Any


ADVICE = [Advice("Set bootdelay=0", 2000.0, [Evidence(13, "Hit any key to stop autoboot:  2")]),
          Advice("Boot with quiet <now>", 548.4, ["<script>alert(3)</script>", OSC.decode()]),
          Advice("Nothing quoted", 1.0, None)]


def phases_with_times(p: Part) -> int:
    data = tables.to_json(p.analysis)
    return sum(1 for ph in data["phases"] if ph["start_s"] is not None
               and ph["end_s"] is not None)


def svgs(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(f"{SVG}svg"))


def svg_title(svg: ET.Element) -> str:
    title = svg.find(f"{SVG}title")
    return "" if title is None else title.text or ""


def test_html_is_well_formed_with_one_rect_per_phase(tmp_path: Path) -> None:
    parts = [part(p) for p in [*DEFAULT, *QUIET, QEMU_LOG]]
    page = render(Report(parts), "html")
    assert page.startswith("<!DOCTYPE html>")
    root = ET.fromstring(page.split("\n", 1)[1])  # tags balanced, attributes quoted
    assert {el.tag for el in root.iter()} <= ALLOWED_TAGS
    waterfalls = [s for s in svgs(root) if svg_title(s).endswith(": timeline")]
    assert [svg_title(s).split(":")[0] for s in waterfalls] == [p.name for p in parts]
    for svg, p in zip(waterfalls, parts, strict=True):
        assert len(svg.findall(f"{SVG}rect")) == phases_with_times(p) >= 3
    # every waterfall has the same axis: the same tick labels
    ticks = {tuple(t.text for t in s.iter(f"{SVG}text") if t.get("text-anchor") == "middle")
             for s in waterfalls}
    assert len(ticks) == 1
    bootgraphs = [s for s in svgs(root) if svg_title(s).endswith(": initcalls")]
    assert [svg_title(s) for s in bootgraphs] == ["initcall-qemu.log: initcalls"]
    assert len(bootgraphs[0].findall(f"{SVG}rect")) == 15
    # self-contained: nothing to fetch, nothing to run
    for element in root.iter():
        assert not {"src", "href", "onload", "onerror"} & set(element.attrib)
    assert "<script" not in page and "http-equiv=\"Content-Security-Policy\"" in page
    assert "quiet: no difference shown to login" in page


def test_html_escapes_hostile_device_text(hostile: Path) -> None:
    page = render(Report([part(hostile)], ADVICE), "html")
    root = ET.fromstring(page.split("\n", 1)[1])
    assert {el.tag for el in root.iter()} <= ALLOWED_TAGS
    for bad in ("<script", "<img", "<b>", "\x1b", "\x07", "cm0gLXJmIH4=", "pwned"):
        assert bad not in page
    text = "".join(root.itertext())
    assert "<script>alert(1)</script>" in text  # shown as text, verbatim
    assert "<script>alert(2)</script>" in text  # the initcall's name
    assert HOSTILE_LABEL in text and "<script>alert('board')</script>" in text
    assert "<b>evil</b> login:" in text
    waterfall = next(s for s in svgs(root) if svg_title(s).endswith(": timeline"))
    assert len(waterfall.findall(f"{SVG}rect")) == phases_with_times(part(hostile))
    # the recommendations, ranked as given, their evidence escaped
    titles = ["".join(strong.itertext()) for strong in root.iter("strong")]
    assert titles == ["Set bootdelay=0", "Boot with quiet <now>", "Nothing quoted"]
    assert "predicted saving 548 ms" in text
    assert "line 13: Hit any key to stop autoboot:  2" in text
    assert "<script>alert(3)</script>" in text


def test_markdown_has_tables_charts_comparison_and_safe_text(hostile: Path) -> None:
    parts = [part(p) for p in [*DEFAULT, *QUIET, hostile]]
    md = render(Report(parts, ADVICE[:2], top=5), "markdown")
    assert md.startswith("# Boot report: ")
    assert "## Recommendations\n\n1. **Set bootdelay=0** (predicted saving 2000 ms)" in md
    assert "   - `line 13: Hit any key to stop autoboot:  2`" in md
    assert "**Boot with quiet \\<now\\>** (predicted saving 548 ms)" in md
    assert "## Comparison" in md and "quiet: no difference shown to login" in md
    assert md.count("### Timeline") == 5 and md.count("```text") == 7
    assert "| boot | milestone | line |" in md
    assert "\\<script\\>alert(2)\\</script\\>" in md  # the initcall, in the top list
    assert "\x1b" not in md and "\x07" not in md and "cm0gLXJmIH4=" not in md
    # outside fenced blocks and code spans, every < is backslash-escaped: no HTML
    fenced = False
    for line in md.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            assert not re.search(r"(?<!\\)<", re.sub(r"`[^`]*`", "", line)), line


def test_text_charts_in_markdown_keep_their_width() -> None:
    md = render(Report([part(QEMU_LOG)], top=10), "markdown")
    blocks = md.split("```text\n")[1:]
    assert len(blocks) == 2
    for block in blocks:
        body = block.split("\n```", 1)[0].splitlines()
        assert body and all(len(line) <= 100 for line in body)


def test_csv_has_one_row_per_session_and_milestone(hostile: Path) -> None:
    parts = [part(p) for p in [*DEFAULT, hostile]]
    rows = list(csv.DictReader(io.StringIO(render(Report(parts), "csv"))))
    assert len(rows) == sum(len(p.analysis.milestones) for p in parts)
    first = rows[0]
    assert first["session"] == DEFAULT[0].name and first["milestone"] == "bootloader"
    assert first["label"] == "default" and float(first["elapsed_s"]) < 0.01
    bad = [r for r in rows if r["session"] == "hostile.jsonl"]
    assert {r["label"] for r in bad} == {"'" + HOSTILE_LABEL}  # not a formula
    login = next(r for r in bad if r["milestone"] == "login")
    assert login["text"] == "<b>evil</b> login:" and login["kernel_s"] == ""


def test_json_holds_everything(hostile: Path, tmp_path: Path) -> None:
    slower = tmp_path / "slower.log"
    slower.write_bytes(QEMU_LOG.read_bytes().replace(b"after 60773 usecs", b"after 90773 usecs"))
    parts = [part(p) for p in [*DEFAULT, QEMU_LOG, slower]]
    data = json.loads(render(Report(parts, ADVICE), "json"))
    assert data["format"] == "bootlab-report" and data["version"] == 1
    assert [s["name"] for s in data["sessions"]] == [p.name for p in parts]
    assert data["sessions"][0]["analysis"]["milestones"][0]["id"] == "bootloader"
    assert data["sessions"][0]["initcalls"] is None
    qemu = data["sessions"][2]["initcalls"]
    assert qemu["count"] == 103 and len(qemu["calls"]) == 103
    assert [c["name"] for c in data["comparison"]["columns"]] == [
        "default", "initcall-qemu.log", "slower.log"]
    (initcall_diff,) = data["initcall_diffs"]
    assert (initcall_diff["a"], initcall_diff["b"]) == ("initcall-qemu.log", "slower.log")
    top = initcall_diff["changes"][0]
    assert (top["name"], top["module"], top["delta_us"]) == ("virtio_blk_init", "virtio_blk",
                                                             30000)
    assert data["recommendations"][1] == {
        "title": "Boot with quiet <now>", "predicted_ms": 548.4, "low_ms": None,
        "high_ms": None, "detail": "", "evidence": ["<script>alert(3)</script>"],
        "ab_command": None, "measured": None, "trust": "prediction", "why": ""}
    assert data["recommendations"][2]["evidence"] == []
    assert to_json(Report([part(hostile)]))["sessions"][0]["analysis"]["source"]["label"] \
        == HOSTILE_LABEL


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="bootlab")
    add_report_parsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    run = {"report": report_cmd.run_report, "initcalls": report_cmd.run_initcalls}
    return run[args.command](args)


def test_cli_report_writes_each_format(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    advise = report_cmd.advise

    def advising(source: Any, analysis: Any) -> Any:
        seen.append(source.path.name)
        return advise(source, analysis)

    monkeypatch.setattr(report_cmd, "advise", advising)
    inputs = [str(p) for p in [*DEFAULT, *QUIET]]
    for fmt in ("markdown", "html", "csv", "json"):
        written = tmp_path / f"report.{fmt}"
        assert cli("report", *inputs, "--format", fmt, "-o", str(written)) == 0
        assert written.stat().st_size > 1000
    assert seen == [p.name for p in [*DEFAULT, *QUIET]] * 4
    assert "Autoboot countdown" in (tmp_path / "report.html").read_text()
    assert cli("report", str(DEFAULT[0])) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("# Boot report") and "Autoboot countdown" in out


def test_cli_report_with_the_advice_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("report", *map(str, DEFAULT), "--format", "json") == 0
    recommendations = json.loads(capsys.readouterr().out)["recommendations"]
    savings = [r["predicted_ms"] for r in recommendations]
    assert savings == sorted(savings, reverse=True) and savings[0] > 1500
    first = recommendations[0]
    assert "--variant bootdelay0:bootdelay=0" in first["ab_command"]
    assert first["evidence"][0].startswith("line 13: Hit any key to stop autoboot:")


@pytest.mark.parametrize("argv", [
    ["report", "/nonexistent.log"],
    ["report", "README.md", "--profile", "does-not-exist"],
    ["report", "README.md", "--top", "0"],
    ["report", "README.md", "--reference", "nope"],
    ["report", "README.md", "-o", "/nonexistent/dir/r.md"],
    ["initcalls", "/nonexistent.log"],
    ["initcalls", "README.md", "--top", "0"],
])
def test_cli_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(*argv) == 2
    assert capsys.readouterr().err.startswith("bootlab: ")


def test_cli_initcalls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slower = tmp_path / "slower.log"
    slower.write_bytes(QEMU_LOG.read_bytes().replace(b"after 60773 usecs", b"after 90773 usecs"))
    assert cli("initcalls", str(QEMU_LOG), str(slower), "--top", "5", "--width", "70") == 0
    out = capsys.readouterr().out
    assert "initcall-qemu.log: 103 initcalls and probes, initcalls total" in out
    assert "slower.log against initcall-qemu.log:" in out
    assert "  +30.0 ms virtio_blk_init [virtio_blk] (60.8 ms -> 90.8 ms)" in out
    chart = [line for line in out.splitlines() if "█" in line or "▏" in line]
    assert len(chart) == 10 and all(len(line) <= 70 for line in chart)
    assert cli("initcalls", str(QEMU_LOG), "--json", "--top", "3") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["inputs"][0]["count"] == 103 and len(data["inputs"][0]["top"]) == 3
    assert data["diffs"] == []
    assert cli("initcalls", str(DEFAULT[0])) == 1
    assert "no initcall_debug output" in capsys.readouterr().err


# Headless Chromium: the page renders, charts included. In CI (BOOTLAB_REQUIRE_CHROMIUM set) a
# missing browser fails the test instead of skipping it.
CHROMIUM = shutil.which("chromium")
REQUIRE_CHROMIUM = bool(os.environ.get("BOOTLAB_REQUIRE_CHROMIUM"))


def chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM, "BOOTLAB_REQUIRE_CHROMIUM is set but chromium is not installed"
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
         *args, page.as_uri()],
        capture_output=True, timeout=120, check=True)


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) pixels of an 8-bit non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += length + 12
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 3 if colour == 2 else 4
    raw, stride, rows = zlib.decompress(idat), width * bpp, []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = previous[i], previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(b"".join(bytes(line[j:j + 3]) for j in range(0, stride, bpp)))
        previous = line
    return width, height, rows


@pytest.mark.skipif(CHROMIUM is None and not REQUIRE_CHROMIUM,
                    reason="chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_charts(tmp_path: Path, hostile: Path) -> None:
    parts = [part(p) for p in [DEFAULT[0], QEMU_LOG, hostile]]
    page = tmp_path / "report.html"
    page.write_text(render(Report(parts), "html"))
    dom = chromium(tmp_path, page, "--dump-dom").stdout.decode()
    root_dom = dom[dom.index("<body"):]
    assert root_dom.count("<svg") == 5  # three waterfalls, two bootgraphs
    assert root_dom.count("<rect") == sum(phases_with_times(p) + min(15, len(p.initcalls))
                                          for p in parts)
    assert "<script" not in root_dom and "<img" not in root_dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in root_dom
    shot = tmp_path / "shot.png"
    chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1200,1200")
    width, height, rows = png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 1200)
    pixels = Counter(row[i:i + 3] for row in rows for i in range(0, len(row), 3))
    assert len(pixels) > 20  # not blank
    # the waterfall's bars are drawn in their stage colours
    assert pixels[bytes.fromhex("d9892b")] > 200 and pixels[bytes.fromhex("3a78c9")] > 200
