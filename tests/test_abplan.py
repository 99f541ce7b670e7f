"""A/B planning: variant specs, the balanced interleaved plan, the resumable state file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bootlab.core.board.abplan import (
    ABState,
    ABStateError,
    SpecError,
    SpecItem,
    acts_from,
    format_spec,
    load_or_create,
    make_plan,
    parse_spec,
    parse_variant,
    session_complete,
    state_path,
)
from bootlab.core.board.settings import load_settings
from bootlab.core.capture.session import SessionWriter

VARIANTS = [("base", ""), ("quiet", "quiet"), ("fast", "bootdelay=0,cmdline+=quiet")]


# --- specs ---------------------------------------------------------------------------------

def test_parse_spec_every_form() -> None:
    items = parse_spec(" quiet, bootdelay=0 ,uboot:bootcmd=run a; run b,uboot:silent=,"
                       "cmdline+=console=ttyS0\\,115200,cmdline-=splash")
    assert items == [
        SpecItem("setting", "quiet", None),
        SpecItem("setting", "bootdelay", "0"),
        SpecItem("uboot", "bootcmd", "run a; run b"),
        SpecItem("uboot", "silent", ""),
        SpecItem("cmdline_add", "", "console=ttyS0,115200"),
        SpecItem("cmdline_remove", "", "splash"),
    ]
    assert parse_spec(format_spec(items)) == items
    assert format_spec(items) == ("quiet,bootdelay=0,uboot:bootcmd=run a; run b,uboot:silent=,"
                                  "cmdline+=console=ttyS0\\,115200,cmdline-=splash")


def test_backslashes_round_trip() -> None:
    items = parse_spec("uboot:cmd=echo a\\;b\\\\c")
    assert items == [SpecItem("uboot", "cmd", "echo a\\;b\\c")]
    assert parse_spec(format_spec(items)) == items


def test_empty_spec_is_the_board_as_it_is() -> None:
    assert parse_spec("") == [] and parse_spec("  ") == []


@pytest.mark.parametrize(("spec", "says"), [
    ("quiet,,bootdelay0", "empty"),
    ("quiet,", "empty"),
    ("cmdline+=", "no token"),
    ("cmdline+=a b", "no blanks"),
    ("cmdline+quiet", "not a settings item"),
    ("uboot:bootdelay", "uboot:VAR=VALUE"),
    ("uboot:=1", "not a U-Boot variable"),
    ("uboot:a b=1", "not a U-Boot variable"),
    ("bootdelay=", "no value"),
    ("9lives", "not a settings item"),
    ("quiet,quiet", "given twice"),
    ("bootdelay=0,bootdelay=2", "contradicts 'bootdelay=0'"),
    ("cmdline+=quiet,cmdline-=quiet", "contradicts"),
    ("uboot:x=1\n", "control characters"),
])
def test_parse_spec_errors(spec: str, says: str) -> None:
    with pytest.raises(SpecError, match=says):
        parse_spec(spec)


@pytest.mark.parametrize(("text", "expected"), [
    ("quiet:cmdline+=quiet,bootdelay=0", ("quiet", "cmdline+=quiet,bootdelay=0")),
    ("quiet: cmdline+=quiet , bootdelay=0", ("quiet", "cmdline+=quiet,bootdelay=0")),
    ("base", ("base", "")),
    ("base:", ("base", "")),
    ("factory:", ("factory", "")),
    ("quiet", ("quiet", "quiet")),
    ("bootdelay0", ("bootdelay0", "bootdelay0")),
    ("v2:uboot:bootdelay=0", ("v2", "uboot:bootdelay=0")),
])
def test_parse_variant(text: str, expected: tuple[str, str]) -> None:
    assert parse_variant(text) == expected


@pytest.mark.parametrize(("text", "says"), [
    ("base:quiet", "takes no settings"),
    (":quiet", "the name must be"),
    ("my variant:quiet", "the name must be"),
    ("x" * 41 + ":quiet", "the name must be"),
    ("fast:bootdelay=", "no value"),
])
def test_parse_variant_errors(text: str, says: str) -> None:
    with pytest.raises(SpecError, match=says):
        parse_variant(text)


# --- the plan ------------------------------------------------------------------------------

def test_plan_is_balanced_and_interleaved() -> None:
    names = ["a", "b", "c"]
    plan = make_plan(names, 7, seed=42)
    assert len(plan) == 21
    assert Counter(v for v, _ in plan) == {"a": 7, "b": 7, "c": 7}
    for run in range(1, 8):
        round_ = plan[(run - 1) * 3:run * 3]
        assert sorted(round_) == [("a", run), ("b", run), ("c", run)]


def test_plan_is_reproducible_and_random() -> None:
    names = ["a", "b", "c", "d"]
    assert make_plan(names, 10, 1) == make_plan(names, 10, 1)
    plans = {tuple(make_plan(names, 10, seed)) for seed in range(20)}
    assert len(plans) == 20
    firsts = Counter(make_plan(names, 1, seed)[0][0] for seed in range(200))
    assert set(firsts) == set(names)


@pytest.mark.parametrize(("names", "boots"), [([], 3), (["a", "a"], 3), (["a", "b"], 0)])
def test_plan_rejects_bad_input(names: list[str], boots: int) -> None:
    with pytest.raises(ValueError):
        make_plan(names, boots, 1)


# --- state and resume ----------------------------------------------------------------------

def write_session(folder: Path, name: str, reason: str | None) -> str:
    """A session file; closed with `reason`, or left open (no end record) when None."""
    writer = SessionWriter(folder / name, {"label": name}, start_ns=0)
    writer.rx(b"U-Boot 2023.01\r\nboard login: ", 1000)
    if reason is None:
        writer.flush(sync=True)
    else:
        writer.close(t_ns=2000, reason=reason)
    return name


def test_session_complete(tmp_path: Path) -> None:
    assert session_complete(tmp_path / write_session(tmp_path, "a.jsonl", "done"))
    assert not session_complete(tmp_path / write_session(tmp_path, "b.jsonl", "timeout"))
    assert not session_complete(tmp_path / write_session(tmp_path, "c.jsonl", None))
    assert not session_complete(tmp_path / "missing.jsonl")


def test_new_state_is_saved(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "t1", VARIANTS, 3, seed=7)
    assert state.path == tmp_path / "ab-t1.json" == state_path(tmp_path, "t1")
    data = json.loads(state.path.read_text())
    assert data["format"] == "bootlab-ab" and data["seed"] == 7 and data["boots"] == 3
    assert data["variants"] == [{"name": n, "spec": s} for n, s in VARIANTS]
    assert [tuple(step) for step in data["plan"]] == make_plan(["base", "quiet", "fast"], 3, 7)
    assert data["done"] == [] and state.total == 9
    assert not list(tmp_path.glob(".*.tmp"))
    step = state.next_run()
    assert step == state.plan[0]
    assert state.progress(step) == f"boot 1/9: {step[0]}, run 1 of 3"
    meta = state.session_meta(*step)
    assert meta["label"] == step[0]
    assert meta["ab"] == {"name": "t1", "variant": step[0], "run": 1, "seed": 7,
                          "spec": dict(VARIANTS)[step[0]]}


def test_random_seed_is_kept(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "t", VARIANTS, 2)
    again = load_or_create(tmp_path, "t", VARIANTS, 2)
    assert again.seed == state.seed and again.plan == state.plan


def test_resume_continues_where_it_stopped(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "run", VARIANTS, 4, seed=3)
    for i, (variant, run) in enumerate(state.plan[:5]):
        state.mark_done(variant, run, write_session(tmp_path, f"s{i}.jsonl", "done"))
    # interrupted here: a new process picks it up
    resumed = load_or_create(tmp_path, "run", list(reversed(VARIANTS)), 4)
    assert resumed.dropped == [] and len(resumed.done) == 5
    assert resumed.next_run() == state.plan[5]
    assert resumed.progress(state.plan[5]).startswith("boot 6/12: ")
    assert resumed.variants == dict(VARIANTS) and next(iter(resumed.variants)) == "base"
    for i, (variant, run) in enumerate(state.plan[5:], start=5):
        assert resumed.next_run() == (variant, run)
        resumed.mark_done(variant, run, write_session(tmp_path, f"s{i}.jsonl", "done"))
    assert resumed.next_run() is None
    final = ABState.load(resumed.path)
    assert [(d["variant"], d["run"]) for d in json.loads(final.path.read_text())["done"]] \
        == state.plan
    assert final.done[state.plan[0]] == "s0.jsonl"


def test_incomplete_or_missing_sessions_are_booted_again(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "run", VARIANTS, 2, seed=5)
    first, second, third, fourth = state.plan[:4]
    state.mark_done(*first, write_session(tmp_path, "ok.jsonl", "done"))
    state.mark_done(*second, write_session(tmp_path, "cut.jsonl", None))
    state.mark_done(*third, "gone.jsonl")
    state.mark_done(*fourth, write_session(tmp_path, "ok2.jsonl", "done"))
    resumed = load_or_create(tmp_path, "run", VARIANTS, 2)
    assert set(resumed.done) == {first, fourth}
    assert resumed.next_run() == second
    assert len(resumed.dropped) == 2 and "cut.jsonl" in resumed.dropped[0]
    assert set(ABState.load(resumed.path).done) == {first, fourth}


def test_resume_with_other_variants_boots_or_seed_is_refused(tmp_path: Path) -> None:
    load_or_create(tmp_path, "run", VARIANTS, 2, seed=5)
    with pytest.raises(ABStateError, match="started with variants base:, quiet:quiet"):
        load_or_create(tmp_path, "run", VARIANTS[:2], 2)
    with pytest.raises(ABStateError, match="and 2 boots each"):
        load_or_create(tmp_path, "run", VARIANTS, 3)
    with pytest.raises(ABStateError, match="seed 5, not 6"):
        load_or_create(tmp_path, "run", VARIANTS, 2, seed=6)
    assert load_or_create(tmp_path, "run", VARIANTS, 2, seed=5).seed == 5


@pytest.mark.parametrize("content", [
    "{not json", "", "[]", '{"format": "other"}',
    '{"format": "bootlab-ab", "version": 1}',
    '{"format": "bootlab-ab", "version": 9}',
])
def test_corrupted_state_is_a_clear_error(tmp_path: Path, content: str) -> None:
    (tmp_path / "ab-run.json").write_text(content)
    with pytest.raises(ABStateError, match=r"ab-run\.json: not a (readable|valid) A/B state.*"
                                           r"delete it"):
        load_or_create(tmp_path, "run", VARIANTS, 2)


def test_inconsistent_state_is_a_clear_error(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "run", VARIANTS, 2, seed=1)
    data = state.to_json()
    data["plan"] = data["plan"][:-1]
    state.path.write_text(json.dumps(data))
    with pytest.raises(ABStateError, match="does not boot each variant once per round"):
        ABState.load(state.path)
    data = state.to_json()
    data["done"] = [{"variant": "nope", "run": 1, "session": "x.jsonl"}]
    state.path.write_text(json.dumps(data))
    with pytest.raises(ABStateError, match="not in the plan"):
        ABState.load(state.path)


def test_mark_done_outside_the_plan_and_bad_names(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "run", VARIANTS, 1, seed=1)
    with pytest.raises(ValueError):
        state.mark_done("quiet", 2, "x.jsonl")
    with pytest.raises(ValueError):
        load_or_create(tmp_path, "../evil", VARIANTS, 1)
    with pytest.raises(ValueError):
        load_or_create(tmp_path, "dup", [("a", ""), ("a", "quiet")], 1)


def test_save_replaces_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = load_or_create(tmp_path, "run", VARIANTS, 1, seed=1)
    before = state.path.read_text()

    def broken_sync(_fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("bootlab.core.files.atomic.os.fsync", broken_sync)
    with pytest.raises(OSError, match="disk full"):
        state.mark_done(*state.plan[0], "x.jsonl")
    assert state.path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ab-run.json"]


def test_until_decided_boots_round_by_round_to_each_look(tmp_path: Path) -> None:
    variants = [("base", ""), ("quiet", "quiet")]
    state = load_or_create(tmp_path, "s", variants, 8, seed=1, until_effect_s=0.05)
    assert state.plan == make_plan(["base", "quiet"], 8, 1)     # the budget, interleaved
    assert state.design.looks == (3, 5, 8) and state.reach == 3 and state.total == 6
    for step in state.plan[:6]:
        assert state.due_look() is None and state.next_run() == step
        state.mark_done(*step, f"{step[0]}-{step[1]}.jsonl")
    assert state.next_run() is None and state.due_look() == 0 and not state.finished
    state.record_look(3, False, ["quiet: look 1 ..., undecided"])
    assert state.reach == 5 and state.total == 10 and state.next_run() == state.plan[6]
    # Interrupted here: the resumed run knows its looks and goes on to the second.
    again = load_or_create(tmp_path, "s", variants, 8, complete=lambda _: True,
                           until_effect_s=0.05)
    assert again.until == state.until and again.reach == 5
    for step in again.plan[6:10]:
        again.mark_done(*step, f"{step[0]}-{step[1]}.jsonl")
    assert again.due_look() == 1
    again.record_look(5, True, ["quiet: look 2 ..., faster"])
    assert again.finished and again.reach == 5 and again.next_run() is None
    assert again.progress(again.plan[0]).endswith("(look 2; budget 8 each): " +
                                                  f"{again.plan[0][0]}, run 1")
    with pytest.raises(ABStateError, match="started as --until-decided with an effect of 50"):
        load_or_create(tmp_path, "s", variants, 8)
    load_or_create(tmp_path, "f", variants, 8)
    with pytest.raises(ABStateError, match="started as a fixed run"):
        load_or_create(tmp_path, "f", variants, 8, until_effect_s=0.05)
    with pytest.raises(ValueError, match="two boots a side"):
        load_or_create(tmp_path, "t", variants, 1, until_effect_s=0.05)


def test_the_budget_spent_ends_the_run_undecided(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "s", [("base", ""), ("x", "quiet")], 3, seed=2,
                           until_effect_s=0.05)
    assert state.design.looks == (3,)
    for step in state.plan:
        state.mark_done(*step, "s.jsonl")
    state.record_look(3, False, ["x: look 1 ..., undecided"])
    assert state.finished and state.due_look() is None


@pytest.mark.parametrize(("spec", "stage"), [
    ("quiet", "kernel"), ("loglevel=3", "kernel"), ("cmdline+=foo=1", "kernel"),
    ("bootdelay=0", "bootloader"), ("uboot:verify=no", "bootloader"),
    ("quiet,bootdelay=0", "bootloader"), ("", "shutdown"),
])
def test_where_a_setting_can_act(spec: str, stage: str) -> None:
    assert acts_from(parse_spec(spec), load_settings()) == stage



# --- several boards ------------------------------------------------------------------------

def test_one_board_takes_the_plan_in_order(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "one", VARIANTS, 3, seed=2)
    busy: dict[int, str] = {}
    while (step := state.next_run()) is not None:
        assert state.next_for("a", ["a"], busy) == step
        busy[step[1]] = "a"
        state.mark_done(*step, f"{step[0]}-{step[1]}.jsonl", "a")


def test_boards_take_whole_rounds_and_keep_them_on_resume(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "two", VARIANTS, 4, seed=7)
    boards = ["a", "b"]
    busy: dict[int, str] = {}
    first_a = state.next_for("a", boards, busy)
    assert first_a is not None and first_a[1] == 1
    busy[1] = "a"
    first_b = state.next_for("b", boards, busy)
    assert first_b is not None and first_b[1] == 2                 # the next free round
    busy[2] = "b"
    state.mark_done(*first_a, "a1.jsonl", "a")
    state.mark_done(*first_b, "b1.jsonl", "b")
    # "a" goes on with its own round, never with b's
    assert state.next_for("a", boards, busy) == next(s for s in state.plan
                                                     if s[1] == 1 and s not in state.done)
    # interrupted: the half-done rounds stay with their boards, which the state remembers
    resumed = ABState.load(state.path)
    assert resumed.boards == {first_a: "a", first_b: "b"}
    assert json.loads(state.path.read_text())["done"][0]["board"] in ("a", "b")
    assert resumed.next_for("b", boards, {})[1] == 2
    assert resumed.next_for("a", boards, {})[1] == 1
    assert resumed.next_for("c", [*boards, "c"], {})[1] == 3        # a new board: a new round
    # a round begun on a board not in this run goes to any board
    assert resumed.next_for("c", ["c"], {})[1] == 1
    # nothing free: a board waits (None) while the others hold every round left
    assert resumed.next_for("c", [*boards, "c"], {1: "a", 2: "b", 3: "a", 4: "b"}) is None
    assert resumed.session_meta("quiet", 1, "a")["ab"]["board"] == "a"
    assert "board" not in resumed.session_meta("quiet", 1)["ab"]


def test_a_state_without_boards_still_loads(tmp_path: Path) -> None:
    state = load_or_create(tmp_path, "old", VARIANTS, 2, seed=1)
    state.mark_done(*state.plan[0], "x.jsonl")
    assert "board" not in json.loads(state.path.read_text())["done"][0]
    assert ABState.load(state.path).boards == {}
