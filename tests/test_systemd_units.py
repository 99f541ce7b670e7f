"""systemd's own record of the units, read after login (`systemctl show`): parsed, its
critical chain walked as systemd-analyze walks it, placed on the session's clock only by two
reads of the board's monotonic clock that show it kept time, and, on a quiet boot, the boot's
user space."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.built_sessions import kernel, lines, load, write_session

from bootlab.cli import main
from bootlab.core.analysis.systemd_units import critical_chain, parse_show, read_record


def unit(name: str, began: float | None, ready: float | None, after: str = "",
         description: str = "") -> str:
    """One unit's block as `systemctl show` prints it (times in µs on CLOCK_MONOTONIC)."""
    def us(value: float | None) -> int:
        return 0 if value is None else round(value * 1e6)
    return (f"Id={name}\nDescription={description or name}\nAfter={after}\n"
            f"InactiveExitTimestampMonotonic={us(began)}\n"
            f"ActiveEnterTimestampMonotonic={us(ready)}\n")


SHOW = "\n".join([
    unit("-.slice", 1.0, 1.0),
    unit("systemd-journald.socket", 1.2, 1.2, "-.slice"),
    unit("systemd-journald.service", 1.3, 2.5, "systemd-journald.socket -.slice"),
    unit("local-fs.target", 2.6, 2.6, "systemd-journald.service"),
    unit("slow-app.service", 2.7, 6.0, "local-fs.target systemd-journald.socket"),
    unit("quick.service", 2.7, 2.9, "local-fs.target"),
    unit("multi-user.target", 6.1, 6.1, "slow-app.service quick.service local-fs.target"),
    unit("never.service", None, None, "multi-user.target"),
    unit("graphical.target", 6.2, 6.2, "multi-user.target"),
])
"""A record in the shape of board 3's (`systemctl show ... '*'` there: 88 units)."""


def event(reads: list[tuple[float, float, float]], text: str = SHOW) -> dict[str, Any]:
    """A collected systemd event: clock reads as (uptime s, sent s, back s) on the session's
    clock."""
    return {"t": 0, "event": "collected", "source": "systemd", "command": "systemctl show",
            "text": text, "uptime": [{"s": s, "sent": round(sent * 1e9),
                                      "back": round(back * 1e9)} for s, sent, back in reads]}


KEPT = [(20.00, 30.000, 30.004), (22.00, 32.000, 32.004)]
"""Two reads 2 s apart on both clocks: the board's clock zero was 10.0 s into the session."""


def test_the_record_gives_each_units_times_and_order() -> None:
    units = {u.name: u for u in parse_show(SHOW)}
    assert len(units) == 9
    journald = units["systemd-journald.service"]
    assert journald.began_s == 1.3 and journald.ready_s == 2.5
    assert journald.took_s == pytest.approx(1.2)
    assert journald.after == ("systemd-journald.socket", "-.slice")
    assert units["never.service"].ready_s is None and units["never.service"].took_s is None


def test_the_critical_chain_follows_what_each_unit_waited_for_last() -> None:
    chain = [u.name for u in critical_chain(parse_show(SHOW))]
    # from the last target reached, back through the slow app (not the quick one)
    assert chain == ["graphical.target", "multi-user.target", "slow-app.service",
                     "local-fs.target", "systemd-journald.service", "systemd-journald.socket",
                     "-.slice"]
    assert [u.name for u in critical_chain(parse_show(SHOW), "local-fs.target")][:2] == \
        ["local-fs.target", "systemd-journald.service"]
    looped = unit("a.service", 2.0, 2.0, "b.service") + "\n" + \
        unit("b.service", 2.0, 2.0, "a.service")
    assert len(critical_chain(parse_show(looped), "a.service")) == 2   # a loop ends


def test_a_clock_that_kept_time_places_every_unit() -> None:
    record = read_record(event(KEPT), "")
    assert record is not None and record.placed and "kept the host's time" in record.note
    app = next(u for u in record.units if u.name == "slow-app.service")
    assert app.began_host_s == pytest.approx(12.7, abs=0.02)
    assert app.ready_host_s == pytest.approx(16.0, abs=0.02)
    assert record.chain[0].name == "graphical.target"


@pytest.mark.parametrize(("reads", "dmesg", "why"), [
    (KEPT, "[ 1.5] clocksource: Switched to clocksource refined-jiffies",
     "counted in timer ticks"),
    ([KEPT[0]], "", "too few anchors"),
    ([(20.0, 30.0, 30.004), (23.0, 32.0, 32.004)], "", "ran at 1.5"),
    ([], "", "was not read"),
])
def test_a_clock_not_shown_to_keep_time_leaves_the_record_on_it(
        reads: list[tuple[float, float, float]], dmesg: str, why: str) -> None:
    record = read_record(event(reads), dmesg)
    assert record is not None and not record.placed and why in record.note
    assert all(u.ready_host_s is None for u in record.units)
    assert record.chain and record.chain[0].name == "graphical.target"   # order still holds


def quiet_session(path: Path, reads: list[tuple[float, float, float]]) -> Path:
    """A quiet boot: the console shows no status line, systemd's record was read after."""
    chunks = [*lines((0.1, "U-Boot 2023.01"), (0.5, "Starting kernel ...")),
              *kernel(0.6, (0.0, "Booting Linux on physical CPU 0x0")),
              *lines((7.0, "lab login: "))]
    return write_session(path, chunks, [event(reads)], role="boot")


def test_a_quiet_boots_user_space_comes_from_the_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = quiet_session(tmp_path / "s.jsonl", KEPT)
    boot = load(path)[1].boots[-1]
    assert boot.systemd is not None and boot.systemd.placed
    assert {s.name for s in boot.units} >= {"slow-app.service", "multi-user.target"}
    assert all(s.kind == "systemd" for s in boot.units)
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "9 systemd units as systemd recorded them, read after login" not in out  # 8 ready
    assert "systemd units as systemd recorded them, read after login (its monotonic clock" \
        in out
    assert "critical chain to graphical.target" in out and "slow-app.service" in out
    assert main(["analyze", str(path), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["boots"]
    assert shown["systemd"]["placed"] and shown["systemd"]["units"] == 9
    assert [u["unit"] for u in shown["systemd"]["critical_chain"]][:3] == \
        ["graphical.target", "multi-user.target", "slow-app.service"]
    took = {u["unit"]: u["took_s"] for u in shown["units"]}
    assert took["slow-app.service"] == pytest.approx(3.3, abs=0.02)


def test_compare_gives_a_quiet_boots_units_from_the_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two quiet boots whose app took 3.3 s and 2.3 s: `compare` has its row."""
    slower = quiet_session(tmp_path / "a.jsonl", KEPT)
    faster_show = SHOW.replace("ActiveEnterTimestampMonotonic=6000000",
                               "ActiveEnterTimestampMonotonic=5000000")
    faster = write_session(tmp_path / "b.jsonl", [*lines((0.1, "U-Boot 2023.01"),
                                                         (7.0, "lab login: "))],
                           [event(KEPT, faster_show)], role="boot")
    assert main(["compare", str(slower), str(faster), "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)["milestones"]}
    app = rows["took:slow-app.service"]["columns"]
    assert [c["median_s"] for c in app] == [pytest.approx(3.3, abs=0.02),
                                           pytest.approx(2.3, abs=0.02)]
    assert app[1]["delta_s"] == pytest.approx(-1.0, abs=0.02)
    target = rows["unit:multi-user.target"]["columns"]   # on each table's axis
    assert target[0]["median_s"] == pytest.approx(16.1 - 0.1, abs=0.05)


def test_advise_names_the_chain_unit_whose_time_would_be_saved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The app's 3.3 s: multi-user.target waited for it last, but without it would still
    wait for quick.service (ready at 2.9 s): 3.2 s predicted, not 3.3."""
    path = quiet_session(tmp_path / "s.jsonl", KEPT)
    assert main(["advise", str(path), "--json"]) == 0
    found = {r["id"]: r for r in json.loads(capsys.readouterr().out)["recommendations"]}
    app = found["unit:slow-app.service"]
    assert app["predicted_ms"] == pytest.approx(3200, abs=20)
    assert "multi-user.target would start 3200 ms sooner" in app["detail"]
    assert "`systemctl mask`" in app["detail"]
    # a target that took no time saves none, however long the unit above started after it
    late = SHOW.replace(unit("graphical.target", 6.2, 6.2, "multi-user.target"),
                        unit("graphical.target", 9.0, 9.0, "multi-user.target"))
    gap = write_session(tmp_path / "g.jsonl", [*lines((0.1, "U-Boot 2023.01"),
                                                      (12.0, "lab login: "))],
                        [event(KEPT, late)], role="boot")
    assert main(["advise", str(gap), "--json"]) == 0
    found = {r["id"]: r for r in json.loads(capsys.readouterr().out)["recommendations"]}
    assert "unit:multi-user.target" not in found
    assert found["unit:slow-app.service"]["predicted_ms"] == pytest.approx(3200, abs=20)
    # a record left on the board's clock predicts nothing
    unplaced = quiet_session(tmp_path / "u.jsonl", [KEPT[0]])
    assert main(["advise", str(unplaced), "--json"]) == 0
    assert not any(r["id"].startswith("unit:") for r in
                   json.loads(capsys.readouterr().out)["recommendations"])


def test_the_record_joins_the_boot_it_was_read_after_not_a_later_one(tmp_path: Path) -> None:
    """What follows in the same file (a restart, a setup dialogue recorded there) is another
    boot: the record read at 10 s is the first boot's."""
    chunks = [*lines((0.1, "U-Boot 2023.01"), (7.0, "lab login: ")),
              *lines((20.0, "U-Boot 2023.01"), (21.0, "Hit any key to stop autoboot:  0"))]
    record = {**event(KEPT), "t": 10 * 10**9}
    first, second = load(write_session(tmp_path / "s.jsonl", chunks, [record]))[1].boots
    assert first.systemd is not None and first.units and second.systemd is None


def test_the_report_folds_user_space_with_the_critical_chain_as_a_waterfall(
        tmp_path: Path) -> None:
    path = quiet_session(tmp_path / "s.jsonl", KEPT)
    target = tmp_path / "r.html"
    assert main(["report", str(path), "--format", "html", "-o", str(target)]) == 0
    html = target.read_text()
    folded = html.split("<details><summary>Boot 1: before the prompt and user space, unit by "
                        "unit (the critical chain)</summary>")[1].split("</details>")[0]
    assert "<svg" in folded and "slow-app.service" in folded and "3300 ms" in folded
    assert "critical chain to graphical.target" in folded
