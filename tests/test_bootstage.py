"""U-Boot's own stages (bootstage), read at the prompt before `boot` and kept with the boot:
the report parsed, U-Boot's timer judged by two `gettime` reads, the marks placed on the
session's clock only when it kept time, and shown under the table and in JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.built_sessions import lines, load, write_session

from bootlab.cli import main
from bootlab.core.analysis.bootstage import parse_report, read_bootstage
from bootlab.core.analysis.phases import table_rows

REPORT = """Timer summary in microseconds (8 records):
       Mark    Elapsed  Stage
          0          0  reset
     29,559     29,559  board_init_f
     40,980     11,421  board_init_r
     63,556     22,576  eth_common_init
     67,448      3,892  main_loop
     98,865     31,417  cli_loop
Accumulated time:
                 2,944  dm_f
                 3,745  dm_r
"""
"""Board 3's report at its prompt (../shared/lab3/README.md)."""


def event(reads: list[tuple[int, float, float]], text: str = REPORT) -> dict[str, Any]:
    """A collected bootstage event: timer reads as (ms, sent s, back s) on the session's
    clock (negative: before the boot's session began)."""
    return {"t": 0, "event": "collected", "source": "bootstage", "command": "bootstage report",
            "text": text, "timer": [{"ms": ms, "sent": round(sent * 1e9),
                                     "back": round(back * 1e9)} for ms, sent, back in reads]}


KEPT = [(5000, -6.010, -6.000), (7000, -4.010, -4.000)]
"""Two reads 2 s apart on both clocks, each answered within 10 ms: the timer kept time, and
its zero was between 11.010 and 11.000 s before the session began."""


def test_the_report_gives_each_mark_and_the_accumulated_times() -> None:
    stages, accumulated = parse_report(REPORT)
    assert [s.name for s in stages] == ["reset", "board_init_f", "board_init_r",
                                        "eth_common_init", "main_loop", "cli_loop"]
    assert stages[1].mark_s == pytest.approx(0.029559) and stages[0].mark_s == 0.0
    assert accumulated == (("dm_f", pytest.approx(0.002944)), ("dm_r", pytest.approx(0.003745)))
    assert parse_report("Unknown command 'bootstage'") == ((), ())


def test_a_timer_that_kept_time_places_every_mark_within_its_reads_bounds() -> None:
    found = read_bootstage(event(KEPT))
    assert found is not None and found.placed
    reset = found.stages[0]
    assert reset.host_s is not None and reset.uncertainty_ms is not None
    # zero 5.000 s of U-Boot's timer before the first read, answered by -6.000 and asked
    # at -6.010 (less the millisecond a read rounds down)
    assert -11.011 - 0.002 <= reset.host_s <= -11.0 + 0.002
    assert 5.0 <= reset.uncertainty_ms <= 7.0
    cli = found.stages[-1]
    assert cli.host_s == pytest.approx(reset.host_s + 0.098865, abs=1e-4)
    assert "kept the host's time" in found.note and "placed within ±" in found.note


def test_a_timer_running_fast_is_refused_with_its_pace() -> None:
    """Board 3's U-Boot when its TSC calibration fails: 5.687 s of its timer in 2.19 s."""
    found = read_bootstage(event([(2828, -2.378, -2.187), (8515, -0.187, 0.0)]))
    assert found is not None and not found.placed
    assert all(s.host_s is None for s in found.stages)
    assert "not placed" in found.note and "ran at 2.6" in found.note


@pytest.mark.parametrize(("reads", "why"), [
    ([], "no `gettime`"),                                   # a U-Boot without the command
    ([KEPT[0]], "too few anchors"),                         # the second read failed
    ([(50, -6.01, -6.0), (2050, -4.01, -4.0)], "do not fit one timer"),  # marks after a read
    ([(5000, -6.2, -6.0), (7000, -4.2, -4.0)], "do not pin reset within ±50 ms"),  # slow reads
])
def test_stages_the_timer_cannot_place_stay_on_its_own_timer(
        reads: list[tuple[int, float, float]], why: str) -> None:
    found = read_bootstage(event(reads))
    assert found is not None and not found.placed and why in found.note
    assert [s.mark_s for s in found.stages][-1] == pytest.approx(0.098865)


def _session(path: Path, reads: list[tuple[int, float, float]]) -> Path:
    chunks = lines((0.1, "Welcome to GRUB!"), (1.0, "[    0.000000] Linux version 6.1.0"),
                   (3.0, "lab3 login: "))
    return write_session(path, chunks, [event(reads), {"t": 0, "tx": "boot\r"}], role="boot")


def test_analyze_shows_the_stages_under_the_table_and_in_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _session(tmp_path / "s.jsonl", KEPT)
    boot = load(path)[1].boots[0]
    assert boot.bootstage is not None and boot.zero is not None
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "U-Boot's stages (bootstage, read at its prompt before `boot`; U-Boot's timer" in out
    assert "board_init_f" in out and "+0.011" in out and "dm_r" in out
    assert "U-Boot's timer zero (its `reset` record) was 11.00" in out
    assert main(["analyze", str(path), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["boots"]
    stages = shown["bootstage"]
    assert stages["placed"] and stages["stages"][0]["stage"] == "reset"
    zero = table_rows(boot)[0]
    assert zero.elapsed_s == 0.0
    assert stages["stages"][0]["at_s"] == pytest.approx(-11.005, abs=0.01)


def test_analyze_keeps_a_fast_timers_stages_on_it_and_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _session(tmp_path / "s.jsonl", [(2828, -2.378, -2.187), (8515, -0.187, -0.01)])
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "on U-Boot's own timer, not placed: the board's clock ran at 2.6" in out
    assert "timer zero" not in out


def autoboot(path: Path, after: str) -> Path:
    """An autoboot whose U-Boot (`CONFIG_BOOTSTAGE_REPORT`) printed its report, then `after`:
    `Starting kernel ...` (its own report), or its prompt (a report typed there)."""
    report = [(0.9 + i / 1000, text) for i, text in enumerate(REPORT.splitlines())]
    chunks = lines((0.1, "U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)"),
                   (0.5, "Hit any key to stop autoboot:  0"), *report, (1.0, after),
                   (1.1, "[    0.000000] Booting Linux on physical CPU 0x0"),
                   (3.0, "board login: "))
    return write_session(path, chunks)


def test_the_report_u_boot_printed_before_the_kernel_gives_its_stages_on_its_timer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    boot = load(autoboot(tmp_path / "s.jsonl", "Starting kernel ..."))[1].boots[0]
    assert boot.bootstage is not None and not boot.bootstage.placed
    assert [s.name for s in boot.bootstage.stages][-1] == "cli_loop"
    assert all(s.host_s is None for s in boot.bootstage.stages)
    assert main(["analyze", str(tmp_path / "s.jsonl")]) == 0
    out = capsys.readouterr().out
    assert ("U-Boot's stages (bootstage, its own report, printed on the console before "
            "`Starting kernel`; on U-Boot's own timer: no read of it was bracketed") in out
    assert "board_init_r        0.041    +0.011" in out and "timer zero" not in out


def test_a_report_typed_at_the_prompt_is_not_taken_for_the_boots_own(tmp_path: Path) -> None:
    boot = load(autoboot(tmp_path / "s.jsonl", "=> "))[1].boots[0]
    assert boot.bootstage is None


def test_the_device_trees_records_give_the_stages_of_an_autoboot(tmp_path: Path) -> None:
    records = [{"name": "reset", "mark": 0}, {"name": "board_init_f", "mark": 29559},
               {"name": "dm_f", "accum": 2944}, {"name": "bootm_start", "mark": 2100000}]
    chunks = lines((0.1, "U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)"),
                   (1.1, "[    0.000000] Booting Linux on physical CPU 0x0"),
                   (3.0, "board login: "))
    path = write_session(tmp_path / "s.jsonl", chunks, [
        {"t": 4_000_000_000, "event": "collected", "source": "fdt",
         "command": "/proc/device-tree/bootstage", "records": records}])
    stages = load(path)[1].boots[0].bootstage
    assert stages is not None and "device tree" in stages.where and not stages.placed
    assert [(s.name, s.mark_s) for s in stages.stages] == [
        ("reset", 0.0), ("board_init_f", pytest.approx(0.029559)), ("bootm_start", 2.1)]
    assert stages.accumulated == (("dm_f", pytest.approx(0.002944)),)
