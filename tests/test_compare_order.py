"""`bootlab compare` lists milestones in time order, as `analyze` lists a boot's (issue 26,
point 8): a milestone some columns never reached lands where its times put it."""

from __future__ import annotations

import json

import pytest
from support.paths import example_sessions

from bootlab.cli import main
from bootlab.core.analysis.compare import Column, milestone_order

ALL = example_sessions()


def test_compare_json_and_text_list_milestones_in_time_order(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", *map(str, ALL), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ids = [m["id"] for m in data["milestones"]]
    assert ids.index("kernel_done") < ids.index("root_mounted")  # the example
    times_rows = [m for m in data["milestones"] if m["kind"] == "milestone"]
    # the times first, in time order; then lengths (each phase's), then probe figures
    assert data["milestones"][:len(times_rows)] == times_rows
    for i, column in enumerate(data["columns"]):
        times = [m["columns"][i]["median_s"] for m in times_rows if m["columns"][i]]
        assert times == sorted(times), column["name"]
    assert {m["kind"] for m in data["milestones"][len(times_rows):]} <= {"phase", "probe"}
    assert main(["compare", *map(str, ALL)]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:len(ids) + 1]]
    assert rows == ids


def test_a_milestone_some_columns_lack_goes_where_the_others_put_it() -> None:
    """`b`, reached in the fast column alone, comes after `c` there: it goes after `c`, though
    its median (0.6 s) is below `c`'s over both columns (2.75 s) and the profile puts it
    first; probe rows come last."""
    slow = Column("slow", 2, {"a": [1.0, 1.0], "c": [5.0, 5.0], "probe:mem.kb": [9.0, 9.0]})
    fast = Column("fast", 2, {"a": [0.1, 0.1], "c": [0.5, 0.5], "b": [0.6, 0.6]})
    assert milestone_order([slow, fast], {"a": 0, "b": 1, "c": 2}) == \
        ["a", "c", "b", "probe:mem.kb"]
