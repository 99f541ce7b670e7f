"""`bootlab compare` with statistics: spread per column, differences with confidence intervals."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from support.paths import example_sessions

from bootlab.cli import main
from bootlab.core.analysis.compare import (
    EARLY,
    Column,
    Entry,
    found_differently,
    make_judging,
    sentences,
    to_json,
    to_text,
)
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.analysis.stats import describe, difference
from bootlab.core.capture.sources import open_source

EXAMPLES = example_sessions("default") + example_sessions("quiet") \
    + example_sessions("bootdelay0")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_examples_json_has_the_bootdelay0_difference(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "compare", *map(str, EXAMPLES), "--json")
    assert code == 0
    data = json.loads(out)
    assert [c["name"] for c in data["columns"]] == ["default", "quiet", "bootdelay0"]
    login = next(m for m in data["milestones"] if m["id"] == "login")
    default, quiet, fast = login["columns"]
    assert default["difference"] is None
    diff = fast["difference"]
    assert set(diff) == {"mean_ms", "low_ms", "high_ms", "median_delta_ms", "df", "shown",
                         "text"}
    assert diff["low_ms"] < diff["mean_ms"] < diff["high_ms"] < 0 and diff["shown"]
    assert diff["mean_ms"] == pytest.approx(-2083, abs=15)
    assert diff["median_delta_ms"] == pytest.approx(fast["delta_s"] * 1000, abs=1e-3)
    assert re.fullmatch(r"bootdelay0: -\d+ ms to login \(95% CI -\d+\.\.-\d+ ms, 2\+2 boots\)",
                        diff["text"])
    assert quiet["difference"]["text"].startswith("quiet: no difference shown to login")
    assert quiet["difference"]["shown"] is False
    linux = next(m for m in data["milestones"] if m["id"] == "linux")
    assert linux["columns"][1] is None and linux["columns"][2]["difference"]["shown"]


def test_examples_text_has_spread_and_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "compare", *map(str, EXAMPLES))
    assert code == 0
    table, _, below = out.partition("\n\n")
    login_row = next(line for line in table.splitlines() if line.startswith("login"))
    assert re.search(r"\d\.\d{3} \[\d\.\d{3}-\d\.\d{3}\] sd=\d\.\d{3} n=2", login_row)
    said = below.splitlines()
    assert said[0] == "against default (difference of the means, 95% confidence interval):"
    assert any(re.fullmatch(r"bootdelay0: -\d+ ms to login \(95% CI -\d+\.\.-\d+ ms, "
                            r"2\+2 boots\)", line) for line in said)
    quiet = [line for line in said if line.startswith("quiet: ")]
    bootdelay0 = [line for line in said if line.startswith("bootdelay0: ")]
    assert said[1:] == quiet + bootdelay0
    assert bootdelay0[0].startswith("bootdelay0: no difference shown to bootloader")
    to_milestones = [line for line in bootdelay0 if " in the phase " not in line]
    assert to_milestones[-1].split(" to ")[1].startswith("login ")
    # then each phase: the one the setting shortened, with its interval, and the others
    phases = bootdelay0[len(to_milestones):]
    assert phases and all(" in the phase " in line for line in phases)
    assert any(re.fullmatch(r"bootdelay0: -\d+ ms in the phase autoboot→kernel_loaded \(95% CI "
                            r"-\d+\.\.-\d+ ms, 2\+2 boots\)", line) for line in phases)


def test_single_boots_give_no_differences(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "compare", *map(str, EXAMPLES), "--no-group")
    assert code == 0 and "95% CI" not in out and "sd=" not in out
    _, out = run(capsys, "compare", *map(str, EXAMPLES), "--no-group", "--json")
    cells = [c for m in json.loads(out)["milestones"] for c in m["columns"] if c]
    assert cells and all(c["difference"] is None for c in cells)


def columns() -> list[Column]:
    a = Column("base", 5, {"init": [5.1, 5.3, 5.0, 5.2, 5.4], "login": [9.0, 9.1]})
    b = Column("quiet", 5, {"init": [4.7, 4.8, 4.6, 4.9, 4.7], "login": [9.05]})
    c = Column("fast", 3, {"init": [5.2, 5.25, 5.15], "login": [8.0, 8.1, 8.05]})
    return [a, b, c]


def test_json_difference_matches_stats() -> None:
    cols = columns()
    data = to_json(cols, ["init", "login"])
    init, login = data["milestones"]
    diff = difference(cols[0].values["init"], cols[1].values["init"])
    assert diff is not None
    got = init["columns"][1]["difference"]
    assert got["mean_ms"] == pytest.approx(-460) and got["df"] == pytest.approx(diff.df)
    assert (got["low_ms"], got["high_ms"]) == pytest.approx((diff.low * 1000, diff.high * 1000),
                                                            abs=1e-3)
    assert got["median_delta_ms"] == pytest.approx(-500)
    assert got["text"] == describe(diff, "quiet", "init")
    assert login["columns"][1]["difference"] is None            # one boot reached it
    assert login["columns"][2]["difference"]["shown"] is True
    assert init["columns"][2]["difference"]["shown"] is False


def test_text_lists_sentences_per_column_in_milestone_order() -> None:
    cols = columns()
    said = sentences(cols, ["init", "login"])
    assert said == [
        "quiet: -460 ms to init (95% CI -665..-255 ms, 5+5 boots)",
        said[1],
        said[2],
    ]
    assert said[1].startswith("fast: no difference shown to init (95% CI ")
    assert said[2].startswith("fast: -1000 ms to login (95% CI ")
    text = to_text(cols, ["init", "login"])
    assert text.endswith("\n".join(said) + "\n")
    assert "sd=0.158 n=5" in text and "9.050 [9.050-9.050] n=1 (+0.000)" in text
    assert sentences(cols[:1], ["init"]) == []


def test_probe_figures_are_compared_like_phases() -> None:
    from bootlab.core.analysis.compare import Entry, build_columns, probe_figures, to_json, to_text
    from bootlab.core.analysis.phases import Boot

    entries = [Entry(f"a{i}", "nfs", Boot(1, 1, 0.0), figures=probe_figures(
        {"probes": {"read": {"ms": 900.0 + i}}})) for i in range(3)]
    entries += [Entry(f"b{i}", "ubifs", Boot(1, 1, 0.0), figures=probe_figures(
        {"probes": {"read": {"ms": 400.0 + 2 * i}, "bad": "x"}})) for i in range(3)]
    columns = build_columns(entries)
    data = to_json(columns, ["probe:read.ms"])
    row = data["milestones"][0]
    assert row["kind"] == "probe" and row["columns"][1]["difference"]["shown"]
    assert "ubifs: read.ms -499 (95% CI" in to_text(columns, ["probe:read.ms"])


def test_one_verdict_the_others_adjusted_and_early_differences_flagged() -> None:
    base = Column("base", 3, {"starting_kernel": [1.00, 1.01, 1.02], "linux": [1.10, 1.12, 1.11],
                              "login": [5.00, 5.10, 5.05]})
    quiet = Column("quiet", 3, {"starting_kernel": [0.80, 0.81, 0.82],
                                "linux": [0.90, 0.91, 0.92], "login": [4.00, 4.10, 4.05]})
    columns, order = [base, quiet], ["starting_kernel", "linux", "login"]
    judging = make_judging(columns, order, "login", 0.05,
                           early={"quiet": frozenset({"starting_kernel"})})
    assert judging.others == 2 and judging.level == pytest.approx(0.975)
    (verdict,) = judging.verdicts(columns)
    assert verdict.startswith("quiet: faster to login by 1000 ms (95% CI ")
    said = sentences(columns, order, judging)
    assert said[0].startswith("quiet: -200 ms to starting_kernel (97.5% CI ")
    assert said[0].endswith(f": {EARLY}")                       # before quiet can act
    assert said[1].startswith("quiet: -200 ms to linux (97.5% CI ") and EARLY not in said[1]
    assert len(said) == 2                                        # login is the verdict's
    text = to_text(columns, order, judging)
    assert "verdict, at the goal login (against base; one per variant):\n" + verdict in text
    assert "other milestones, no verdicts (Bonferroni for 2 comparisons: each interval at " \
        "97.5%):" in text



def test_a_goal_found_on_different_lines_is_a_caveat() -> None:
    """quiet drops `Run /init`: init falls on the initramfs's first line (a fallback), so the
    two columns time different events; login is found alike in both."""
    profile = load_profile("linux")
    entries = [Entry(path.name, label, analyze_source(open_source(path), profile).boots[0])
               for label in ("default", "quiet") for path in example_sessions(label)]
    said = found_differently(entries, "init")
    assert said is not None and said.startswith("init is found on different lines (default: ")
    assert "Run /init as init process" in said and "quiet: a fallback at '[initramfs]" in said
    assert found_differently(entries, "login") is None
    assert found_differently([e for e in entries if e.label == "quiet"], "init") is None


def test_a_milestone_timed_from_dmesg_in_one_label_and_the_console_in_another_is_a_caveat(
        ) -> None:
    """With --collect, quiet's kernel milestones come from dmesg (when printed), the
    default's from the console (when they arrived): the same line, timed two ways."""
    profile = load_profile("linux")
    default = [Entry(path.name, "default", analyze_source(open_source(path), profile).boots[0])
               for path in example_sessions("default")]
    collected = [Entry(entry.name, "quiet", replace(entry.boot, milestones=[
        replace(m, source="dmesg") if m.id == "linux" else m for m in entry.boot.milestones]))
        for entry in default]
    said = found_differently(default + collected, "linux")
    assert said is not None and said.startswith(
        "linux is timed from different sources (default: console; quiet: dmesg)")
    assert found_differently(default + collected, "login") is None
