"""Budgets: TOML targets per milestone, pass/fail per boot, `bootlab check` and JUnit XML."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.advise_cli import cli
from support.built_sessions import load
from support.lab3_log import lab3_session
from support.paths import example_sessions

from bootlab.core.analysis.budgets import (
    Budget,
    BudgetError,
    BudgetFile,
    evaluate,
    find_budget_file,
    junit_xml,
    parse_budgets,
    validate,
)
from bootlab.core.analysis.profiles import load_profile

DEFAULT = example_sessions("default")
QUIET = example_sessions("quiet")


def login_s(path: Path) -> float:
    _, analysis = load(path)
    boot = analysis.boots[0]
    login = boot.reached("login")
    assert login is not None and login.host_s is not None and boot.start_host_s is not None
    return login.host_s - boot.start_host_s


def write(tmp_path: Path, text: str, name: str = "budget.toml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(("value", "seconds"), [
    ("5.0", 5.0), ("5", 5.0), ('"3s"', 3.0), ('"1500ms"', 1.5), ('" 2.5 s "', 2.5),
    ('"0.25"', 0.25), ('".5s"', 0.5),
])
def test_durations(value: str, seconds: float) -> None:
    assert parse_budgets(f"[budgets]\nlogin = {value}\n").budgets == (
        Budget("login", seconds, 2),)


def test_probe_budget_in_its_own_unit() -> None:
    budgets = parse_budgets('[budgets]\nlogin = 5\n"probe:mem.used_kb" = 30000\n')
    probe = budgets.budgets[1]
    assert (probe.target, probe.limit, probe.line, probe.probe) == ("probe:mem.used_kb",
                                                                    30000.0, 3, True)


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("[budgets]\nlogin = \n", 2, "not valid TOML"),
    ("[budgets]\ninit = 3\nlogin = \"5 min\"\n", 3, "expected seconds"),
    ("[budgets]\nlogin = -1\n", 2, "above 0"),
    ("[budgets]\nlogin = true\n", 2, "expected seconds"),
    ("[budgets]\n\"probe:mem.used_kb\" = \"3s\"\n", 2, "probe's own unit"),
    ("[budgets]\nlogin = 5\n\n[limits]\ninit = 3\n", 4, "only [budgets] is read"),
    ("[budget]\nlogin = 5\n", 1, "unknown table or key 'budget': only [budgets] is read"),
    # a target above the table: before, "no [budgets] table" without a line, or dropped
    ("login = 5\n", 1, "unknown table or key 'login': only [budgets] is read; write targets "
                       "under [budgets]"),
    ("init = 3\n[budgets]\nlogin = 5\n", 1, "unknown table or key 'init'"),
    ("# [budgets]\n", None, "no [budgets] table"),
    ("[budgets]\n", 1, "no [budgets] table"),
    # a nested table where a target's number goes is named at its own header
    ("[budgets]\ninit = 3\n\n[budgets.login]\nmax = 5\n", 4, "budget login = {'max': 5}"),
])
def test_bad_budget_files_say_where(text: str, line: int | None, reason: str) -> None:
    with pytest.raises(BudgetError) as caught:
        parse_budgets(text, "b.toml")
    assert caught.value.line == line
    assert str(caught.value).startswith(f"b.toml:{line}: " if line else "b.toml: ")
    assert reason in str(caught.value)


def test_unknown_milestone_is_an_error_with_its_line() -> None:
    budgets = parse_budgets("[budgets]\nlogin = 5\nlogn = 4\n", "b.toml")
    with pytest.raises(BudgetError, match=r"^b\.toml:3: no milestone 'logn' in the profile"):
        validate(budgets, load_profile("linux").by_id)
    validate(parse_budgets('[budgets]\n"probe:x.y" = 1\n'), load_profile("linux").by_id)


@pytest.mark.parametrize("path", DEFAULT + QUIET, ids=lambda p: p.name)
def test_pass_and_fail_per_boot_with_margin(path: Path) -> None:
    _, analysis = load(path)
    login = login_s(path)
    budgets = BudgetFile("b", (Budget("login", login + 0.25), Budget("login", login - 0.25),
                               Budget("root_wait", 3.0)))
    ok, over, missing = evaluate(budgets, analysis.boots[0])
    assert ok.passed and ok.margin == pytest.approx(0.25)
    assert ok.message() == f"login at {login:.3f} s, within its {login + 0.25:.3f} s budget " \
                           "(0.250 s to spare)"
    assert not over.passed and over.margin == pytest.approx(-0.25)
    assert over.message().endswith("budget by 0.250 s")
    assert not missing.passed and missing.measured is None and missing.margin is None
    assert missing.message() == "root_wait was never reached (budget 3.000 s)"


def test_probe_figures_are_checked() -> None:
    _, analysis = load(DEFAULT[0])
    budgets = BudgetFile("b", (Budget("probe:mem.used_kb", 30000.0),
                               Budget("probe:mem.free_kb", 1.0)))
    used, free = evaluate(budgets, analysis.boots[0], {"mem.used_kb": 25340.0})
    assert used.passed and used.message() == ("probe:mem.used_kb at 25340, within its 30000 "
                                              "budget (4660 to spare)")
    assert not free.passed and free.message() == "probe:mem.free_kb was not measured (budget 1)"


def test_budget_file_lookup_in_the_config_dir(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    config = Path(os.environ["BOOTLAB_CONFIG_DIR"])
    with pytest.raises(BudgetError, match="give --budget FILE"):
        find_budget_file(None)
    default = write(config, "[budgets]\nlogin = 9\n", "budgets.toml")
    named = write(config, "[budgets]\nlogin = 1\n", "budgets/release.toml")
    assert find_budget_file(None) == default
    monkeypatch.chdir(tmp_path)
    assert find_budget_file("release") == named
    given = write(tmp_path, "[budgets]\nlogin = 2\n", "release")
    assert find_budget_file("release") == Path("release") and given.is_file()
    with pytest.raises(BudgetError, match="no such budget file"):
        find_budget_file("nightly")


def test_junit_xml_has_a_testcase_per_session_and_budget(tmp_path: Path) -> None:
    from bootlab.core.analysis.budgets import BootResult

    results = []
    for path in DEFAULT:
        _, analysis = load(path)
        budgets = BudgetFile("b", (Budget("login", login_s(DEFAULT[0]) + 0.001),
                                   Budget("init", 1.0), Budget("root_wait", 3.0)))
        results.append(BootResult(str(path), 1, tuple(evaluate(budgets, analysis.boots[0]))))
    root = ET.fromstring(junit_xml(results))
    assert root.tag == "testsuites" and root.get("tests") == "6"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [p.name for p in DEFAULT]
    cases = suites[0].findall("testcase")
    assert [c.get("name") for c in cases] == [
        f"login <= {login_s(DEFAULT[0]) + 0.001:.3f} s", "init <= 1.000 s",
        "root_wait <= 3.000 s"]
    assert cases[0].find("failure") is None
    assert float(cases[0].get("time") or 0) == pytest.approx(login_s(DEFAULT[0]), abs=1e-6)
    assert cases[0].get("classname") == f"bootlab.{DEFAULT[0].stem}"
    init = cases[1].find("failure")
    assert init is not None and init.get("type") == "budget"
    assert "over its 1.000 s budget by" in (init.get("message") or "")
    missing = cases[2].find("failure")
    assert missing is not None and missing.get("type") == "missing"
    assert missing.get("message") == "root_wait was never reached (budget 3.000 s)"
    failures = int(root.get("failures") or 0)
    assert failures == sum(int(s.get("failures") or 0) for s in suites) >= 4


def test_check_passes_with_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    limit = max(login_s(p) for p in DEFAULT) + 0.5
    budget = write(tmp_path, f'[budgets]\nlogin = {limit}\ninit = "{limit * 1000:.0f}ms"\n')
    assert cli("check", *map(str, DEFAULT), "--budget", str(budget)) == 0
    captured = capsys.readouterr()
    assert captured.out.count("PASS  ") == 4 and "FAIL" not in captured.out
    assert "4 of 4 budgets met" in captured.err


def test_check_fails_with_exit_1_and_writes_junit(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    budget = write(tmp_path, "[budgets]\nlogin = 5.45\nroot_wait = 3\n")
    report = tmp_path / "out.xml"
    paths = [str(p) for p in DEFAULT]
    assert cli("check", *paths, "--budget", str(budget), "--junit", str(report)) == 1
    out = capsys.readouterr().out
    assert "FAIL  " in out and "root_wait was never reached" in out
    root = ET.parse(report).getroot()
    assert len(root.findall("testsuite/testcase")) == 4
    passed = [login_s(p) <= 5.45 for p in DEFAULT]
    logins = [s.find("testcase") for s in root.findall("testsuite")]
    assert [case is not None and case.find("failure") is None for case in logins] == passed


def test_check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    budget = write(tmp_path, "[budgets]\nlogin = 60\n")
    assert cli("check", str(QUIET[0]), "--budget", str(budget), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is True and data["budget_file"] == str(budget)
    verdict = data["boots"][0]["budgets"][0]
    assert verdict["target"] == "login" and verdict["passed"]
    assert verdict["margin"] == pytest.approx(60 - verdict["measured"])


def test_check_bad_toml_exits_2_with_file_and_line(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    budget = write(tmp_path, "[budgets]\nlogin = 5\ninit = = 3\n")
    assert cli("check", str(DEFAULT[0]), "--budget", str(budget)) == 2
    assert f"{budget}:3: not valid TOML" in capsys.readouterr().err


def test_check_unknown_milestone_exits_2(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    budget = write(tmp_path, "[budgets]\n\nlogn = 5\n")
    assert cli("check", str(DEFAULT[0]), "--budget", str(budget)) == 2
    assert f"{budget}:3: no milestone 'logn'" in capsys.readouterr().err


def test_check_uses_the_config_dir_budget(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path(os.environ["BOOTLAB_CONFIG_DIR"]), "[budgets]\nlogin = 0.5\n", "budgets.toml")
    assert cli("check", str(DEFAULT[0])) == 1
    assert "over its 0.500 s budget" in capsys.readouterr().out


def test_check_missing_budget_file_exits_2(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("check", str(DEFAULT[0]), "--budget", str(tmp_path / "none.toml")) == 2
    assert "no such budget file" in capsys.readouterr().err


def test_check_probe_budget_from_session_meta(tmp_path: Path) -> None:
    path = tmp_path / DEFAULT[0].name
    shutil.copy(DEFAULT[0], path)
    with path.open("a") as handle:
        handle.write(json.dumps({"t": 0, "meta": {"probes": {"mem": {"used_kb": 25340}}}})
                     + "\n")
    fits = write(tmp_path, '[budgets]\n"probe:mem.used_kb" = 30000\n', "fits.toml")
    tight = write(tmp_path, '[budgets]\n"probe:mem.used_kb" = 20000\n', "tight.toml")
    assert cli("check", str(path), "--budget", str(fits)) == 0
    assert cli("check", str(path), "--budget", str(tight)) == 1


def test_analyze_shows_budgets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bootlab.cli import main

    budget = tmp_path / "b.toml"
    budget.write_text('[budgets]\nlogin = 5.0\ninit = "1s"\n')
    session = example_sessions("bootdelay0")[0]
    assert main(["analyze", str(session), "--budget", str(budget)]) == 0
    out = capsys.readouterr().out
    assert "PASS  boot 1  login" in out and "FAIL  boot 1  init" in out


def test_a_systemd_unit_has_a_budget(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Board 3's cold boot: a target and a service, each ready on its status line, checked
    as milestones are (two goals of one boot, each with its budget); a unit never shown ready
    fails; a name that is no unit's is refused with its line."""
    path = lab3_session(tmp_path)
    budget = write(tmp_path, '[budgets]\n"unit:multi-user.target" = "30s"\n'
                             '"unit:systemd-journald.service" = "20s"\n'
                             '"unit:myapp.service" = "40s"\n')
    assert cli("check", str(path), "--budget", str(budget)) == 1
    out = capsys.readouterr().out
    assert "unit:multi-user.target at 29.254 s, within its 30.000 s budget" in out
    assert "unit:systemd-journald.service at 21.732 s, over its 20.000 s budget" in out
    assert "unit:myapp.service was never reached (budget 40.000 s)" in out
    bad = write(tmp_path, '[budgets]\n"unit:multi user" = "30s"\n', "bad.toml")
    assert cli("check", str(path), "--budget", str(bad)) == 2
    assert "bad.toml:2" in capsys.readouterr().err
