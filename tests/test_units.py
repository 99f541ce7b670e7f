"""User space unit by unit: systemd's status lines read into each unit's start and readiness
(on board 3's real cold boot and real corpus logs), shown under the phase table, and a unit as
the boot's goal (`unit:NAME`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.lab3_log import lab3_session
from support.paths import LAB3

from bootlab.core.analysis.goals import Goal, GoalError, goal_meta, parse_goal
from bootlab.core.analysis.loading import load
from bootlab.core.analysis.pipeline import parse_line
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.analysis.units import critical, read_units, same_unit, unit_marker
from bootlab.core.capture.session import append_meta

CORPUS = LAB3.parent / "corpus" / "logs"
SYSTEMD_LOGS = sorted(CORPUS.glob("*systemd*.log"))


def lines(*texts: str) -> list:
    return [parse_line(i + 1, text.encode(), float(i), 0) for i, text in enumerate(texts)]


def test_a_units_start_and_readiness_come_from_its_status_lines(tmp_path: Path) -> None:
    boot = load(lab3_session(tmp_path)).analysis.boots[-1]
    by_name = {s.name: s for s in boot.units}
    assert len(boot.units) > 60
    target = by_name["multi-user.target"]
    assert target.ready_s == pytest.approx(29.280) and target.kind == "Reached target"
    assert target.began_s is None                    # a target has no Starting line
    # shown whole in the kernel's log, cut on the console: one unit, timed start to ready
    trigger = by_name["systemd-udev-trigger.service"]
    assert trigger.description == "Coldplug All udev Devices"
    assert trigger.took_s == pytest.approx(1.920, abs=0.001)
    assert not any("[0m" in s.name or "\x1b" in s.name for s in boot.units)
    assert critical(boot.units, 1) == [trigger]
    assert not any(s.failed for s in boot.units)


def test_cut_names_are_one_unit_only_where_head_and_tail_agree() -> None:
    whole = "system-modprobe.slice - Slice /system/modprobe"
    assert same_unit("system-modpr…lice - Slice /system/modprobe", whole)
    assert not same_unit("system-modpr…lice - Slice /system/getty", whole)
    # two units with one head: the tails tell them apart
    assert not same_unit("systemd-update-ut…rd System Boot/Shutdown in UTMP",
                         "systemd-update-ut… Record Runlevel Change in UTMP")
    assert same_unit("systemd-tmpfiles-…te System Files and Directories",
                     "systemd-tmpfiles-…m Files and Directories")
    assert not same_unit("a…b", "a…b2")             # too short to tell anything apart
    # a cut form two whole units agree with stays apart from both
    steps = read_units(lines(
        "[  OK  ] Started systemd-ask-password-console.path - Dispatch Password Requests.",
        "[  OK  ] Started systemd-ask-password-wall.path - Dispatch Password Requests.",
        "         Starting systemd-ask-passwo…ispatch Password Requests..."))
    assert [s.name for s in steps if s.began_s is not None] == [
        "systemd-ask-passwo…ispatch Password Requests"]


def test_older_systemd_shows_descriptions_and_failures() -> None:
    steps = read_units(lines(
        "         Starting Load Kernel Modules...",
        "[  OK  ] Started Load Kernel Modules.",
        "         Starting Network Time Synchronization...",
        "[FAILED] Failed to start Network Time Synchronization.",
        "Starting kernel ...",                       # U-Boot's, not a unit's
        "[  OK  ] Reached target Multi-User System."))
    by_name = {s.name: s for s in steps}
    assert set(by_name) == {"Load Kernel Modules", "Network Time Synchronization",
                            "Multi-User System"}
    assert by_name["Load Kernel Modules"].took_s == pytest.approx(1.0)
    assert by_name["Network Time Synchronization"].failed
    assert by_name["Network Time Synchronization"].ready_s is None


@pytest.mark.parametrize("log", SYSTEMD_LOGS, ids=lambda p: p.name[:3])
def test_real_systemd_boots_give_their_units(log: Path) -> None:
    loaded = load(log)
    if loaded.source.line_time is None:
        steps = read_units(parse_line(i + 1, raw, float(i), 0) for i, raw in
                           enumerate(loaded.source.data.split(b"\n")))
    else:
        steps = [s for b in loaded.analysis.boots for s in b.units]
    assert len(steps) >= 10, log.name
    assert any(s.kind == "Reached target" for s in steps)
    assert not any(re.search(r"\x1b|\[[0-9;]*m", s.name) for s in steps)


def test_analyze_lists_the_slowest_units_on_the_tables_axis(tmp_path: Path) -> None:
    path = lab3_session(tmp_path)
    shown = subprocess.run([sys.executable, "-m", "bootlab", "analyze", str(path)],
                           capture_output=True, text=True, check=True).stdout
    assert re.search(r"user space, \d+ systemd units on the console's status lines \(\d+ shown "
                     r"ready; last target graphical\.target at 29\.270\)", shown), shown
    assert re.search(r"systemd-udev-trigger\.service +20\.228 +22\.148 +1\.920", shown)
    data = json.loads(subprocess.run(
        [sys.executable, "-m", "bootlab", "analyze", str(path), "--json"],
        capture_output=True, text=True, check=True).stdout)
    units = {u["unit"]: u for u in data["boots"][0]["units"]}
    assert units["multi-user.target"]["ready_s"] == pytest.approx(29.254)


def test_a_unit_is_a_goal(tmp_path: Path) -> None:
    profile = load_profile("linux")
    goal = parse_goal(["unit:multi-user.target"], None, profile)
    assert goal.until == ("unit:multi-user.target",)
    for bad in ("unit:multi user", "unit:", "unit:rm -rf.service"):
        with pytest.raises(GoalError, match="not a systemd unit's name"):
            parse_goal([bad], None, profile)
    path = lab3_session(tmp_path)
    append_meta(path, goal=goal_meta(Goal(("unit:multi-user.target",))))
    boot = load(path).analysis.boots[-1]
    reached = boot.reached("unit:multi-user.target")
    assert reached is not None and reached.host_s == pytest.approx(29.280)
    assert reached.stage == "userspace"
    marker = unit_marker("systemd-ask-password-console.path")
    # its whole name, or nothing: a cut name may be another unit's
    assert marker.patterns[0].search(
        "[  OK  ] Started systemd-ask-password-console.path - Dispatch Password Requests.")
    assert not marker.patterns[0].search(
        "[  OK  ] Started systemd-ask-passwo…quests to Console Directory Watch.")
    assert not marker.patterns[0].search(
        "[  OK  ] Started systemd-ask-password-console.path.bak - Something else.")
