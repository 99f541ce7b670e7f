"""The boot's goal (bootlab/core/analysis/goals.py): parsing, the pattern goal as a milestone,
and the goal stored in a session header."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support.paths import example_sessions

from bootlab.core.analysis.goals import (
    GOAL_ID,
    Goal,
    GoalError,
    goal_meta,
    parse_goal,
    session_profile,
    several_to_judge,
    stored_goal,
    with_goal,
)
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.sources import open_source

LINUX = load_profile("linux")
DEFAULT = example_sessions("default")[0]


def test_no_goal_given_is_login() -> None:
    goal = parse_goal([], None, LINUX)
    assert goal == Goal(("login",)) and goal.text == "login" and goal.name == "login"


def test_a_pattern_goal_is_milestone_goal() -> None:
    goal = parse_goal([], "example service started", LINUX)
    assert goal.until == (GOAL_ID,) and goal.pattern == "example service started"
    assert goal.text == "/example service started/"
    assert goal.name == "goal 'example service started'"
    assert parse_goal(["init"], "x", LINUX).text == "init or /x/"


def test_an_unknown_milestone_lists_the_valid_ones() -> None:
    with pytest.raises(GoalError) as caught:
        parse_goal(["nope"], None, LINUX)
    message = str(caught.value)
    assert "no milestone 'nope' in profile linux" in message
    assert "starting_kernel" in message and "login" in message


@pytest.mark.parametrize(("pattern", "why"), [
    ("(", "missing )"),
    ("(a+)+", "repetition inside a repetition"),
    ("", "empty"),
])
def test_a_bad_pattern_is_refused(pattern: str, why: str) -> None:
    with pytest.raises(GoalError) as caught:
        parse_goal([], pattern, LINUX)
    assert why in str(caught.value)


def test_the_pattern_milestone_is_found_on_the_first_matching_line() -> None:
    goal = parse_goal([], r"S10hello: example service started", LINUX)
    profile = with_goal(LINUX, goal)
    assert with_goal(profile, goal).markers == profile.markers   # replaced, not added twice
    assert with_goal(LINUX, parse_goal(["init"], None, LINUX)) is LINUX
    source = open_source(DEFAULT)
    (boot,) = analyze(source.data, profile, source.line_time).boots
    reached = goal.reached(boot.milestones)
    assert reached is not None and reached.id == GOAL_ID and reached.stage == "userspace"
    assert reached.title == "/S10hello: example service started/"
    assert "S10hello" in reached.text
    ids = [m.id for m in boot.milestones]
    assert ids.index("init") < ids.index(GOAL_ID) < ids.index("login")


def test_the_goal_round_trips_through_a_session_header() -> None:
    for goal in (Goal(), parse_goal([], "ready", LINUX), parse_goal(["init", "login"], None,
                                                                    LINUX),
                 parse_goal(["login"], "ready", LINUX, every=True)):
        assert stored_goal({"goal": goal_meta(goal)}) == goal
    assert stored_goal({}) is None                                  # an older session
    assert session_profile(LINUX, {}) is LINUX


@pytest.mark.parametrize("raw", [
    "login", {"until": []}, {"until": "login"}, {"until": [1]},
    {"until": ["goal"], "pattern": "(a+)+"},        # the file is data: checked like any pattern
    {"until": ["login"], "pattern": "ready"},       # a pattern that is not milestone goal
])
def test_a_damaged_stored_goal_is_ignored(raw: object) -> None:
    assert stored_goal({"goal": raw}) is None


def test_a_pattern_goal_keeps_the_rest_of_the_profile() -> None:
    profile = with_goal(LINUX, parse_goal([], "app ready", LINUX))
    assert profile.kind == LINUX.kind and profile.kernel_lines == LINUX.kernel_lines
    assert [m.id for m in profile.markers] == [m.id for m in LINUX.markers] + [GOAL_ID]
    # the kernel's unstamped lines are still passed over before user space's first line
    data = (b"Starting kernel ...\nFreeing unused kernel memory: 1024K\nrandom: crng init done\n"
            b"Starting logging: OK\napp ready\n")
    ids = {m.id: m.line for m in analyze(data, profile).milestones}
    assert ids["init"] == 4 and ids[GOAL_ID] == 5


def test_each_of_several_goals_is_reached_at_the_last_of_them() -> None:
    """`--all`: "display and sound": the boot is done when both came, in either order."""
    source = open_source(DEFAULT)
    goal = parse_goal(["login"], r"S10hello: example service started", LINUX, every=True)
    assert goal.every and goal.until == ("login", GOAL_ID)
    assert goal.text == "login and /S10hello: example service started/"
    (boot,) = analyze(source.data, with_goal(LINUX, goal), source.line_time).boots
    at = goal.reached(boot.milestones)
    assert at is not None and at.id == "login"           # the goal milestone came before it
    first_of = parse_goal(["login"], r"S10hello: example service started", LINUX)
    assert (first := first_of.reached(boot.milestones)) is not None and first.id == GOAL_ID
    # one of them missing: not reached, however many times the other came
    missing = Goal(("init", "shell"), every=True)
    assert missing.reached(boot.milestones) is None
    assert missing.reached([*boot.milestones, *boot.milestones]) is None
    assert missing.missed(boot.milestones, 120) == "not reached within 120 s (shell not seen)"
    assert Goal(("shell",)).missed(boot.milestones, 60) == "not reached within 60 s"
    # a reset between them: each boot is a set of its own
    init = next(m for m in boot.milestones if m.id == "init")
    login = next(m for m in boot.milestones if m.id == "login")
    both = Goal(("init", "login"), every=True)
    assert both.reached([init, replace(login, boot=init.boot + 1)]) is None
    assert both.reached([init, replace(login, boot=init.boot + 1), replace(
        init, boot=init.boot + 1)]) is not None
    assert Goal(("init", "login"), every=True).pick(
        [("login", 2.0), ("init", 1.0)], lambda item: item[0]) == ("init", 1.0)


@pytest.mark.parametrize(("until", "pattern"), [(["login"], None), ([], "ready"), ([], None),
                                                (["login", "login"], None)])
def test_each_of_one_goal_is_refused(until: list[str], pattern: str | None) -> None:
    with pytest.raises(GoalError, match="--all asks for each of several goals"):
        parse_goal(until, pattern, LINUX, every=True)


def test_a_goal_asked_after_login_stays_alone_with_all() -> None:
    with pytest.raises(GoalError, match="give it alone"):
        parse_goal(["ready:true", "login"], None, LINUX, every=True)


def test_a_run_judging_one_time_refuses_each_of_several_goals() -> None:
    assert several_to_judge(parse_goal(["login"], None, LINUX), "an A/B run") is None
    assert several_to_judge(parse_goal([], "ready", LINUX), "an A/B run") is None
    first = several_to_judge(parse_goal(["init", "login"], None, LINUX), "a tune")
    assert first is not None and "init or login is the first of several" in first
    why = several_to_judge(parse_goal(["init", "login"], None, LINUX, every=True),
                           "an A/B run")
    assert why is not None and why.startswith("an A/B run judges one goal's time")
    assert "each of init and login" in why and "bootlab check" in why


def test_a_stored_goal_of_each_of_one_milestone_is_read_as_that_milestone() -> None:
    assert stored_goal({"goal": {"until": ["login"], "all": True}}) == Goal(("login",))
    assert stored_goal({"goal": {"until": ["init", "login"], "all": "yes"}}) == Goal(
        ("init", "login"))
