"""Goals asked at the board's shell after login. `ready:COMMAND` (core/analysis/ready.py): a
command polled until it succeeds, placed between its last failed run and its first success, or
not timed when it was true from the first run. `journal:REGEX` (core/analysis/journal_goal.py):
the first journal message matching, placed by its journal time on the board's clock, read
twice against the host's, or left on the board's clock, said. Both parsed, stored, refused
where they cannot be asked, shown in the table, in JSON and checked by budgets. The engine's
asking runs on the real boards (test_board_control, test_board_classes).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from support.built_sessions import lines, load, write_session

from bootlab.cli import main
from bootlab.core.analysis.budgets import evaluate, parse_budgets, validate
from bootlab.core.analysis.goals import GoalError, goal_meta, parse_goal, stored_goal
from bootlab.core.analysis.journal_goal import place as journal_place
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.analysis.ready import place
from bootlab.exitcodes import BAD_INPUT

COMMAND = "systemctl is-active myapp"
GOAL = f"ready:{COMMAND}"
MS = 1_000_000


def run(sent_ms: int, back_ms: int, status: int) -> dict[str, int]:
    return {"sent": sent_ms * MS, "back": back_ms * MS, "status": status}


def polls(**runs: dict[str, int]) -> dict[str, Any]:
    return {"event": "collected", "source": "ready", "command": COMMAND, "polls": 40, **runs}


def test_a_ready_goal_is_parsed_stored_and_read_back() -> None:
    goal = parse_goal([GOAL], None, load_profile("linux"))
    assert goal.ready == COMMAND and goal.name == GOAL
    assert stored_goal({"goal": goal_meta(goal)}) == goal
    assert stored_goal({"goal": {"until": ["ready:"]}}) is None     # the file is data


@pytest.mark.parametrize(("until", "pattern", "profile", "said"), [
    (["ready: "], None, "linux", "needs the command"),
    ([GOAL, "login"], None, "linux", "give it alone"),
    ([GOAL], "display on", "linux", "give it alone"),
    ([GOAL], None, "grub", "has no login milestone"),
])
def test_a_ready_goal_that_cannot_be_asked_is_refused(until: list[str], pattern: str | None,
                                                     profile: str, said: str) -> None:
    with pytest.raises(GoalError, match=said):
        parse_goal(until, pattern, load_profile(profile))


def test_the_goal_sits_between_the_last_failed_run_and_the_first_success() -> None:
    milestone, said = place(polls(first=run(4000, 4030, 3), failed=run(9000, 9040, 3),
                                  ok=run(9090, 9120, 0)))
    assert milestone is not None and milestone.id == GOAL and milestone.source == "ready"
    assert milestone.host_s == pytest.approx(9.06)
    assert milestone.uncertainty_ms == pytest.approx(60.0)
    assert "turned true within 120 ms" in said and "±60.0 ms" in said


def test_a_command_true_at_its_first_run_reaches_the_goal_untimed() -> None:
    milestone, said = place(polls(first=run(4000, 4030, 0), ok=run(4000, 4030, 0)))
    assert milestone is None
    assert "succeeded at its first run" in said and "when it turned true is not known" in said


def test_a_command_that_never_succeeds_gives_no_goal() -> None:
    milestone, said = place(polls(first=run(4000, 4030, 1), failed=run(63000, 63040, 1)))
    assert milestone is None and "never succeeded: 40 runs after login over 59.0 s" in said


def asked_session(tmp_path: Path, goal: str, event: dict[str, Any], t_ms: int) -> Path:
    """A boot measured to `goal`, to its login prompt, then the goal's answer at `t_ms`."""
    chunks = lines((0.1, "U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)"),
                   (1.0, "Starting kernel ..."), (3.0, "board login: "))
    return write_session(tmp_path / "asked.jsonl", chunks, [{"t": t_ms * MS, **event}],
                         role="boot", goal=goal_meta(parse_goal([goal], None,
                                                                load_profile("linux"))))


def ready_session(tmp_path: Path, **runs: dict[str, int]) -> Path:
    """A boot to its login prompt, then the ready goal's polls."""
    return asked_session(tmp_path, GOAL, polls(**runs), 10_000)


def test_the_table_json_and_budgets_show_the_goal(tmp_path: Path) -> None:
    path = ready_session(tmp_path, first=run(3500, 3520, 3), failed=run(8000, 8020, 3),
                         ok=run(8070, 8100, 0))
    _, analysis = load(path)
    boot = analysis.boots[-1]
    reached = boot.reached(GOAL)
    assert reached is not None and reached.host_s == pytest.approx(8.05)
    assert boot.ready is not None and "±50.0 ms" in boot.ready
    budgets = parse_budgets(f'[budgets]\n"{GOAL}" = "7s"\n', "budget.toml")
    validate(budgets, {m.id for m in load_profile("linux").markers})
    [verdict] = evaluate(budgets, boot)
    assert not verdict.passed and verdict.measured == pytest.approx(7.95)  # over 7 s
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["analyze", str(path), "--json"]) == 0
    shown = {m["id"]: m for m in json.loads(out.getvalue())["milestones"]}
    assert shown[GOAL]["line"] is None and shown[GOAL]["uncertainty_ms"] == pytest.approx(50.0)
    assert json.loads(out.getvalue())["boots"][0]["ready"] == boot.ready
    text = io.StringIO()
    with redirect_stdout(text):
        assert main(["analyze", str(path)]) == 0
    row = next(r for r in text.getvalue().splitlines() if "ready:" in r)
    assert row.split()[1].startswith("ready:systemctl") and "(±50.0 ms)" in row, row
    assert len(row.split("  ")[1]) <= 40          # a long command is cut in the text table


def test_a_recording_refuses_a_ready_goal(tmp_path: Path) -> None:
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(["record", str(tmp_path / "no-such-port"), "--until", GOAL,
                     "--sessions", str(tmp_path)])
    assert code == BAD_INPUT and "which a recording does not log in to" in err.getvalue()


JOURNAL = "journal:Started myapp"
LOGGED = "[   12.345678] lab3 systemd[1]: Started myapp.service - My App."


def journal_event(line: str | None = LOGGED, reads: tuple[tuple[float, float, float], ...] = (
        (14.0, 20.0, 20.01), (16.5, 22.5, 22.51)), clocksource: str = "tsc") -> dict[str, Any]:
    """A journal goal's answer: the message's line, and two uptime reads as (uptime s, sent
    s, back s) on the session's clock (the board's clock 6 s behind the session's)."""
    return {"event": "collected", "source": "journal", "pattern": "Started myapp",
            "polls": 3, "clocksource": clocksource, **({"line": line} if line else {}),
            "uptime": [{"s": up, "sent": round(sent * 1e9), "back": round(back * 1e9)}
                       for up, sent, back in reads]}


def test_a_journal_goal_is_parsed_alone_with_a_valid_pattern() -> None:
    goal = parse_goal([JOURNAL], None, load_profile("linux"))
    assert goal.journal == "Started myapp" and goal.after_login and goal.ready is None
    assert stored_goal({"goal": goal_meta(goal)}) == goal
    for until, said in (([f"{JOURNAL}", "login"], "give it alone"),
                        (["journal: "], "needs the pattern"), (["journal:(a"], "bad journal")):
        with pytest.raises(GoalError, match=said):
            parse_goal(until, None, load_profile("linux"))


def test_the_journal_time_is_placed_by_the_boards_clock_reads() -> None:
    milestone, said = journal_place(journal_event())
    assert milestone is not None and milestone.id == JOURNAL and milestone.source == "journal"
    # uptime 14.0 answered by 20.01 s and asked at 20.0: 12.345678 falls 1.65 s before
    assert milestone.host_s == pytest.approx(18.35, abs=0.02)
    assert milestone.uncertainty_ms is not None and milestone.uncertainty_ms < 20
    assert "the journal logged `lab3 systemd[1]: Started myapp.service - My App.` at 12.346" \
        in said and "placed within ±" in said


@pytest.mark.parametrize(("event", "said"), [
    (journal_event(clocksource="jiffies"), "counted in timer ticks"),
    (journal_event(reads=((14.0, 20.0, 20.01), (17.5, 22.5, 22.51))), "ran at 1.4"),
    (journal_event(reads=()), "the board's monotonic clock was not read"),
    (journal_event(line=None), "no journal message of this boot matched /Started myapp/"),
])
def test_a_journal_time_the_clock_cannot_place_stays_on_the_boards_clock(
        event: dict[str, Any], said: str) -> None:
    milestone, words = journal_place(event)
    assert milestone is None and said in words


def journal_session(tmp_path: Path) -> Path:
    """A boot to its login prompt, then the journal goal's answer."""
    return asked_session(tmp_path, JOURNAL, journal_event(), 23_000)


def test_the_journal_goal_joins_the_table(tmp_path: Path) -> None:
    _, analysis = load(journal_session(tmp_path))
    boot = analysis.boots[-1]
    reached = boot.reached(JOURNAL)
    assert reached is not None and reached.host_s == pytest.approx(18.35, abs=0.02)
    assert boot.ready is not None and "placed within" in boot.ready
