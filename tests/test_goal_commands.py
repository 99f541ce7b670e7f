"""The boot's goal on the command line: `record`, `boot` and `ab` with `--pattern` stop at it
and store it with their sessions; `analyze`, `compare` and `sessions` show its `goal`
milestone again; a bad pattern or an unknown milestone is a usage error (exit 2).

Several goals are the first of them, or with `--all` each of them (the boot is done at the
last). `record` runs as a process on a real pty; `boot` and `ab` drive the fake U-Boot and Linux of
tests/support/fake_board.py on a real pty.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from support.fake_board import run_cli_on_fake_board
from support.paths import BOOTLAB, example_sessions
from support.pty_pair import Pty

from bootlab.core.capture.session import load_session

BOOT = load_session(example_sessions("default")[0]).data
APP_LINE = b"[rcS] S10hello: example service started"
PATTERN = r"S10hello: example service \w+"
GOAL = {"until": ["goal"], "pattern": PATTERN}


def bootlab(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=30)


def boot_sessions(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.glob("*.jsonl")) if load_session(p).meta.get("role")
            == "boot"]


@pytest.fixture
def recorded(pty_pair: Pty, tmp_path: Path) -> Path:
    """A boot recorded with `--pattern`: it ends at the application's line, before login."""
    proc = subprocess.Popen([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path),
                             "-q", "--pattern", PATTERN, "--label", "app"],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    assert "recording" in proc.stderr.readline()
    end = BOOT.index(APP_LINE) + BOOT[BOOT.index(APP_LINE):].index(b"\n") + 1
    pty_pair.write(BOOT[:end])                     # nothing after the goal: no login prompt
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert f"goal: /{PATTERN}/" in err and "done" in err
    (path,) = tmp_path.glob("*.jsonl")
    return path


def test_record_with_a_pattern_stops_at_it_and_stores_the_goal(recorded: Path) -> None:
    session = load_session(recorded)
    assert session.meta["goal"] == GOAL
    assert APP_LINE in session.data and b"login:" not in session.data
    assert session.events[-1]["reason"] == "done"


def test_analyze_compare_and_sessions_show_the_stored_goal(recorded: Path) -> None:
    result = bootlab("analyze", str(recorded), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["source"]["goal"] == GOAL
    (goal,) = [m for m in data["milestones"] if m["id"] == "goal"]
    assert goal["title"] == f"/{PATTERN}/" and "S10hello" in goal["text"]
    assert [m["id"] for m in data["milestones"]][-1] == "goal"
    text = bootlab("analyze", str(recorded))
    assert any(line.split()[1] == "goal" for line in text.stdout.splitlines()[1:])
    compared = bootlab("compare", str(recorded), str(example_sessions("default")[0]), "--json")
    assert compared.returncode == 0, compared.stderr
    assert "goal" in compared.stdout
    listed = json.loads(bootlab("sessions", "--json", "--sessions",
                                str(recorded.parent)).stdout)
    (row,) = listed
    assert row["total_s"] == pytest.approx(goal["elapsed_s"], abs=1e-6)   # the goal's time


@pytest.mark.parametrize(("argv", "says"), [
    (["record", "PORT", "--pattern", "("], "bad goal pattern '('"),
    (["record", "PORT", "--pattern", "(\\w+\\s?)*ready"], "repetition inside a repetition"),
    (["record", "PORT", "--until", "nope"], "no milestone 'nope' in profile linux"),
    (["boot", "PORT", "--pattern", "(a+)+"], "repetition inside a repetition"),
    (["boot", "PORT", "--until", "nope"], "its milestones: "),
    (["ab", "PORT", "--variant", "a:", "--variant", "quiet", "--pattern", "["],
     "bad goal pattern"),
    (["boot", "PORT", "--until", "login", "--all"], "--all asks for each of several goals"),
    (["boot", "PORT", "--budget", "no-such-budgets"], "no such budget file"),
    (["boot", "PORT", "--until", "ready:true", "--until", "journal:x"], "give --all"),
    (["boot", "PORT", "--until", "ready:true", "--until", "login", "--all"],
     "not with goals seen on the console"),
    (["record", "PORT", "--pattern", "x", "--all"], "--all asks for each of several goals"),
    (["ab", "PORT", "--variant", "a:", "--variant", "quiet", "--until", "init", "--until",
      "login", "--all"], "an A/B run judges one goal's time, and --all asks for each of init "
                         "and login"),
    (["tune", "PORT", "--until", "init", "--pattern", "x", "--all"],
     "a tune judges one goal's time"),
])
def test_a_bad_goal_is_a_usage_error(pty_pair: Pty, tmp_path: Path, argv: list[str],
                                     says: str) -> None:
    argv = [pty_pair.name if word == "PORT" else word for word in argv]
    started = time.monotonic()
    result = bootlab(*argv, "--sessions", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and "Traceback" not in result.stderr
    assert not list(tmp_path.glob("*.jsonl"))        # refused before the port was used
    assert time.monotonic() - started < 15


def test_boot_with_a_pattern_is_measured_to_it(pty_pair: Pty, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "boot", "--set", "quiet",
                                        "--pattern", PATTERN, "--label", "q", "--pace-ms", "1")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert board.commands[-1] == "boot"
    learned, path = boot_sessions(tmp_path)    # first run on the port: a setup boot first
    assert load_session(learned).meta["label"] == "setup-boot"
    session = load_session(path)
    assert session.meta["goal"] == GOAL and "quiet" in session.meta["settings"]["cmdline"]
    rows = [line.split()[0] for line in out.splitlines()]
    assert "goal" in rows and "linux" not in rows  # the phase table: quiet, with the goal


def test_ab_with_a_pattern_compares_the_time_to_it(pty_pair: Pty, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                    "--variant", "quiet", "--boots", "2", "--seed", "3",
                                    "--pace-ms", "1", "--pattern", PATTERN)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "verdict, at the goal goal (against base; one per variant):\nquiet: " in out
    assert "to goal by " in out or "at goal: " in out or "to goal: " in out
    tagged = [load_session(p) for p in boot_sessions(tmp_path)
              if load_session(p).meta.get("ab")]
    assert len(tagged) == 4 and all(s.meta["goal"] == GOAL for s in tagged)


@pytest.mark.parametrize(("variant", "refused"), [
    ("quiet", True), ("quiet,cmdline+=systemd.show_status=1", False)])
def test_a_unit_goal_quiet_hides_is_refused_before_any_boot(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str], variant: str,
        refused: bool) -> None:
    """systemd prints its status lines under `quiet` only for failures: a unit goal would
    never show, every quiet boot timing out. Said before the first measured boot."""
    code, _ = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", f"q:{variant}", "--boots", "1",
                                        "--pace-ms", "1", "--until", "unit:multi-user.target")
    err = capsys.readouterr().err
    said = ("variant q: the goal unit:multi-user.target shows on systemd's status lines, which "
            "`quiet` hides (it prints them only for failures): add "
            "cmdline+=systemd.show_status=1 to the variant, or measure to login")
    assert (said in err) == refused, err
    if refused:  # from the specs alone: no boot measured, not even one to learn the board
        assert code == 2 and not [p for p in tmp_path.glob("*.jsonl")
                                  if load_session(p).meta.get("role") == "boot"
                                  or "setup-boot" in p.name]


def test_record_with_all_goes_on_to_the_last_of_its_goals(pty_pair: Pty,
                                                          tmp_path: Path) -> None:
    """`--until login --pattern APP --all`: the application's line comes first, and the
    recording goes on to login (the first of them would have ended at the line)."""
    proc = subprocess.Popen([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path),
                             "-q", "--until", "login", "--pattern", PATTERN, "--all"],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    assert "recording" in proc.stderr.readline()
    pty_pair.write(BOOT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert err.index(f"goal: /{PATTERN}/") < err.index(" login: ") < err.index("milestones, done)")
    (path,) = tmp_path.glob("*.jsonl")
    session = load_session(path)
    assert session.meta["goal"] == {**GOAL, "until": ["login", "goal"], "all": True}
    assert APP_LINE in session.data and b"login:" in session.data
    data = json.loads(bootlab("analyze", str(path), "--json").stdout)
    at = {m["id"]: m for m in data["milestones"]}
    assert at["goal"]["line"] < at["login"]["line"]
    (row,) = json.loads(bootlab("sessions", "--json", "--sessions", str(tmp_path)).stdout)
    assert row["total_s"] == pytest.approx(at["login"]["elapsed_s"], abs=1e-6)


def test_boot_with_all_is_measured_to_the_last_of_its_goals(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each goal with its budget: the boot goes on to the last, and `--budget` says each
    one's verdict (one missed: exit 1)."""
    budget = tmp_path / "budgets.toml"
    budget.write_text("[budgets]\nlogin = 60\ngoal = \"0.001ms\"\n")
    code, _ = run_cli_on_fake_board(pty_pair, tmp_path, "boot", "--pattern", PATTERN,
                                    "--until", "login", "--all", "--pace-ms", "1",
                                    "--budget", str(budget))
    out, err = capsys.readouterr()
    assert code == 1, err
    assert re.search(r"^PASS  login at \d+\.\d{3} s, within its 60\.000 s budget", out, re.M)
    assert re.search(r"^FAIL  goal at \d+\.\d{3} s, over its 0\.000 s budget", out, re.M)
    assert "1 of 2 budgets met" in err
    path = boot_sessions(tmp_path)[-1]
    session = load_session(path)
    assert session.meta["goal"] == {**GOAL, "until": ["login", "goal"], "all": True}
    assert APP_LINE in session.data and b"login:" in session.data


def test_boot_asks_two_goals_after_login_together_and_places_each(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two commands, true 1.0 s and 1.5 s after the kernel started (after the login prompt):
    asked round after round, each is placed between its own last failure and first success,
    and the boot's goal is the later of them."""
    early, late = "ready-after 1.0", "ready-after 1.5"
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "boot", "--until",
                                        f"ready:{late}", "--until", f"ready:{early}", "--all",
                                        "--pace-ms", "1")
    out, err = capsys.readouterr()
    assert code == 0, err
    asked = [c for c in board.shell_commands if "ready-after" in c]
    assert asked[0].startswith(f"( {late} )") and asked[1].startswith(f"( {early} )")
    path = boot_sessions(tmp_path)[-1]
    events = [e for e in load_session(path).events if e.get("source") == "ready"]
    assert [e["command"] for e in events] == [late, early]
    data = json.loads(bootlab("analyze", str(path), "--json").stdout)
    found = {m["id"]: m for m in data["milestones"] if m["id"].startswith("ready:")}
    first, second = found[f"ready:{early}"], found[f"ready:{late}"]
    assert first["elapsed_s"] < second["elapsed_s"]
    assert 0.4 < second["elapsed_s"] - first["elapsed_s"] < 0.6 + (
        first["uncertainty_ms"] + second["uncertainty_ms"]) / 1000
    assert re.search(rf"^ready:{late} .*\(±\d+\.\d ms\)", out, re.M)
