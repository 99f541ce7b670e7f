"""Time zero at power-on (bootlab/core/analysis/timezero.py): a boot bootlab started itself (a
place's power switched on, a `boot`/`reset` it typed) is timed from that moment, its first row
naming it, so the time before the first byte is measured; a boot whose start bootlab did not
cause or stamp keeps its first-byte table and says why; nothing is timed from zero across a gap.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.built_sessions import kernel, lines, load, write_session
from support.paths import example_sessions

from bootlab.cli import main
from bootlab.core.analysis import compare, timezero
from bootlab.core.analysis.phases import ZERO_ID, Boot, phase_rows, silent_start, table_rows
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.recording.recorder import Recorder, StopRule
from bootlab.core.render import tables
from bootlab.core.render.report import Part, Report, render, waterfalls

POWER_ON_S = 0.5
FIRST_BYTE_S = 0.525
"""Board 3's case: its first byte came 25 ms after the power-on."""


def boot_chunks(first: float = FIRST_BYTE_S) -> list[tuple[float, bytes]]:
    """A boot whose first line is U-Boot's banner (the ROM code before it printed nothing)."""
    return [*lines((first, "U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)"),
                   (first + 0.1, "Hit any key to stop autoboot:  0"),
                   (first + 0.3, "Starting kernel ...")),
            *kernel(first + 0.4, (0.0, "Booting Linux on physical CPU 0x0"),
                    (0.5, "Run /sbin/init as init process")),
            *lines((first + 1.5, "buildroot login: "))]


def power(t_s: float, state: str = "on") -> dict[str, Any]:
    return {"t": round(t_s * 1e9), "event": "power", "state": state, "via": "NetworkPowerPort",
            "ack_ms": 3.1}


def powered(path: Path, **meta: Any) -> Path:
    """A `bootlab record --place` session: power off, power on, then the boot."""
    return write_session(path, boot_chunks(), [power(0.3, "off"), power(POWER_ON_S)],
                         place="board3", **meta)


def first_boot(path: Path) -> Boot:
    return load(path)[1].boots[0]


def test_a_power_on_bootlab_switched_is_time_zero_and_the_table_starts_there(
        tmp_path: Path) -> None:
    boot = first_boot(powered(tmp_path / "s.jsonl"))
    assert boot.zero is not None and boot.zero.at_s == POWER_ON_S
    assert boot.zero.what == "power-on via NetworkPowerPort (place board3)"
    rows = table_rows(boot)
    assert rows[0].milestone.id == ZERO_ID and rows[0].elapsed_s == 0.0
    assert rows[0].milestone.text == boot.zero.what
    assert rows[1].milestone.id == "bootloader"
    assert rows[1].elapsed_s == pytest.approx(0.025) and rows[0].duration_s == rows[1].elapsed_s
    assert rows[1].delta_s == pytest.approx(0.025)      # the phase before the first byte
    assert rows[-1].elapsed_s == pytest.approx(1.525)   # totals from power-on
    # the firmware's silent time is measured, not "not in this table"
    note = silent_start(boot)
    assert note is not None and "0.025 s before the first byte are measured from time zero" \
        in note and "not in this table" not in note


def test_the_table_without_time_zero_starts_at_the_first_byte_and_says_why(
        tmp_path: Path) -> None:
    boot = first_boot(write_session(tmp_path / "s.jsonl", boot_chunks()))
    assert boot.zero is None and boot.zero_unknown == timezero.PASSIVE
    rows = table_rows(boot)
    assert rows[0].milestone.id == "bootloader" and rows[0].elapsed_s == 0.0
    note = silent_start(boot)
    assert note is not None and "not in this table" in note and timezero.PASSIVE in note


def test_analyze_text_json_and_csv_start_at_time_zero(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = powered(tmp_path / "s.jsonl")
    assert main(["analyze", str(path)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1].split()[:6] == ["1", "zero", "(bootlab)", "-", "0.000", "-"]
    assert "power-on via NetworkPowerPort" in text[1]
    assert text[2].split()[:4] == ["1", "bootloader", "1", "0.025"]
    assert any("measured from time zero" in line for line in text)
    assert main(["analyze", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first, second = data["milestones"][:2]
    assert first["id"] == "zero" and first["line"] is None and first["elapsed_s"] == 0.0
    assert first["source"] == "bootlab" and second["elapsed_s"] == pytest.approx(0.025)
    assert data["phases"][0]["from"] == "zero" and data["phases"][0]["to"] == "bootloader"
    assert data["boots"][0]["zero"] == {"what": "power-on via NetworkPowerPort (place board3)",
                                        "host_s": POWER_ON_S}
    assert data["boots"][0]["zero_unknown"] is None
    csv = tables.to_csv(load(path)[1]).splitlines()
    assert csv[1].startswith("1,zero (bootlab),-,0.000,-,0.025,")
    # a milestone reference is unchanged: no zero row, times from that milestone
    assert main(["analyze", str(path), "--reference", "linux", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["milestones"][0]["id"] == "bootloader"
    assert next(m for m in data["milestones"] if m["id"] == "linux")["elapsed_s"] == 0.0


def test_a_passive_recording_and_a_log_say_why_they_have_no_time_zero(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chunks = [(0.1, b"DDR training done\r\n"), *boot_chunks()]   # firmware printed: no silent note
    path = write_session(tmp_path / "s.jsonl", chunks)
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"boot 1: elapsed from the first byte, time zero not known: {timezero.PASSIVE}" in out
    log = tmp_path / "boot.log"
    log.write_bytes(b"".join(data for _, data in chunks))
    boot = first_boot(log)
    assert boot.zero is None and boot.zero_unknown == timezero.NO_LOG_ZERO


def test_a_boot_command_bootlab_typed_is_time_zero_at_its_enter(tmp_path: Path) -> None:
    # `bootlab boot`: the session starts as `boot` is typed, a character at a time, echoed
    typed = [{"t": round((0.01 + 0.01 * i) * 1e9), "tx": c} for i, c in enumerate("boot\r")]
    echo = [(0.011 + 0.01 * i, c.encode()) for i, c in enumerate("boot")]
    chunks = [*echo, (0.052, b"\r\n"), *lines((0.30, "## Booting kernel from Legacy Image"),
                                              (0.35, "Starting kernel ...")),
              *kernel(0.4, (0.0, "Booting Linux on physical CPU 0x0"))]
    boot = first_boot(write_session(tmp_path / "s.jsonl", chunks, typed, role="boot"))
    assert boot.zero is not None and boot.zero.at_s == pytest.approx(0.05)
    assert boot.zero.what == "`boot` typed by bootlab"
    rows = table_rows(boot)
    assert rows[0].milestone.id == ZERO_ID
    starting = next(r for r in rows if r.milestone.id == "starting_kernel")
    assert starting.elapsed_s == pytest.approx(0.30)


@pytest.mark.parametrize(("meta", "sent", "why"), [
    ({"role": "boot"}, [], timezero.UNSTAMPED),          # --power-cmd, DTR/RTS, a person
    ({"role": "boot"}, [{"t": 10**7, "tx_redacted": 6}], timezero.UNSTAMPED),
    ({}, [{"t": 10**7, "tx": "reset\r"}], timezero.PASSIVE),   # `record --send`: not bootlab's
    # restarted by a power-cycle command: the login typed later is not when the boot began
    ({"role": "boot", "restarted_by": "power"}, [{"t": 10**7, "tx": "root\n"}],
     timezero.UNSTAMPED),
])
def test_no_time_zero_is_guessed(tmp_path: Path, meta: dict[str, Any],
                                 sent: list[dict[str, Any]], why: str) -> None:
    boot = first_boot(write_session(tmp_path / "s.jsonl", boot_chunks(), sent, **meta))
    assert boot.zero is None and boot.zero_unknown == why
    assert table_rows(boot)[0].elapsed_s == 0.0 and table_rows(boot)[0].milestone.id != ZERO_ID


def test_a_reset_line_released_is_time_zero(tmp_path: Path) -> None:
    reset = {"t": round(POWER_ON_S * 1e9), "event": "reset", "via": "a DTR pulse",
             "ack_ms": 0.1}
    boot = first_boot(write_session(tmp_path / "s.jsonl", boot_chunks(),
                                    [reset, {"t": 10**9, "tx": "root\n"}], role="boot",
                                    restarted_by="dtr"))
    assert boot.zero is not None and boot.zero.what == "reset via a DTR pulse"
    assert boot.zero.at_s == POWER_ON_S
    assert table_rows(boot)[1].delta_s == pytest.approx(FIRST_BYTE_S - POWER_ON_S)


def test_a_gap_between_time_zero_and_the_first_byte_withholds_time_zero(tmp_path: Path) -> None:
    events = [power(POWER_ON_S), {"t": 510_000_000, "event": "gap", "reason": "peer closed"},
              {"t": 520_000_000, "event": "reconnect", "gap_s": 0.01}]
    boot = first_boot(write_session(tmp_path / "s.jsonl", boot_chunks(), events))
    assert boot.zero is None and boot.incomplete is None   # its banner shows its beginning
    assert boot.zero_unknown is not None and "the port was lost at 0.510 s" in boot.zero_unknown
    assert table_rows(boot)[0].milestone.id == "bootloader"


def test_a_gap_inside_the_boot_leaves_nothing_timed_from_zero_across_it(tmp_path: Path) -> None:
    events = [power(POWER_ON_S), {"t": 1_000_000_000, "event": "gap", "reason": "peer closed"},
              {"t": 1_100_000_000, "event": "reconnect", "gap_s": 0.1}]
    boot = first_boot(write_session(tmp_path / "s.jsonl", boot_chunks(), events))
    assert boot.zero is not None and boot.incomplete is not None
    rows = table_rows(boot)
    assert rows[0].milestone.id == ZERO_ID and rows[1].elapsed_s == pytest.approx(0.025)
    after = [r for r in rows if (r.milestone.host_s or 0.0) > 1.0]
    assert after and all(r.elapsed_s is None for r in after)


def test_only_the_boot_bootlab_started_has_time_zero(tmp_path: Path) -> None:
    chunks = [*boot_chunks(), *boot_chunks(first=4.0)]
    _, analysis = load(write_session(tmp_path / "s.jsonl", chunks, [power(POWER_ON_S)]))
    first, second = analysis.boots
    assert first.zero is not None and second.zero is None
    assert second.zero_unknown is not None and "began by itself after boot 1" \
        in second.zero_unknown
    assert phase_rows(second)[0].elapsed_s == 0.0


def test_the_recorder_stamps_a_power_on_that_becomes_the_tables_zero(tmp_path: Path) -> None:
    """The recorder as `bootlab record --place` drives it: a power cycle stamped through
    `stamp`, the example boot fed after it; the loaded session counts from the power-on."""
    boot_session = load_session(example_sessions("default")[0])
    start = time.monotonic_ns()
    recorder = Recorder(load_profile("linux"), tmp_path, {"label": "t", "place": "lab"},
                        StopRule(("login",)), start_ns=start)
    recorder.stamp("power", start + 10**8, state="off", via="pdu")
    on = start + 3 * 10**8
    recorder.stamp("power", on, state="on", via="pdu")
    first_byte = on + 20_000_000
    for t_ns, data in boot_session.chunks:
        recorder.feed(data, first_byte + t_ns - boot_session.chunks[0][0])
    recorder.finish()
    boot = first_boot(recorder.records[0].path)
    assert boot.zero is not None and boot.zero.what == "power-on via pdu (place lab)"
    rows = table_rows(boot)
    assert rows[0].milestone.id == ZERO_ID
    assert rows[1].milestone.id == "bootloader" and rows[1].elapsed_s == pytest.approx(0.02,
                                                                                         abs=1e-3)


def pressed(tmp_path: Path, old: str) -> list[Path]:
    """`record --power-on-cmd` as it drives the recorder: the command (80 ms) is run and
    stamped at its start before the reads are fed. `old`: what the board printed of an
    earlier boot: "before" (it was running, printing before the press and on until the switch
    came at the command's end, as board 3's reset took effect 165 ms into a monitor command),
    "during" (it powered up as its console was opened, its first bytes after the stamp, then
    the switch cut it short: board 3 on a loaded host), or "none" (it was off, and the new
    boot's first bytes came while the command still ran: a relay tool)."""
    start = time.monotonic_ns()
    recorder = Recorder(load_profile("linux"), tmp_path, {"label": "t"},
                        StopRule(("login",)), start_ns=start)
    ms = 1_000_000
    press = start + 500 * ms
    recorder.stamp("power", press, state="on", via="`press`", ran_ms=80.0)
    if old == "before":
        recorder.feed(b"\r\nU-Boot SPL 2023.01 (Jan 01 2023 - 00:00:00 +0000)\r\n",
                      press - 10 * ms)
    if old != "none":
        for at_ms, (_, data) in zip((20, 40), boot_chunks(0.0)[:2], strict=True):
            recorder.feed(data, press + at_ms * ms)
    first_byte = press + (30 if old == "none" else 300) * ms
    for t_s, data in boot_chunks(0.0):
        recorder.feed(data, first_byte + int(t_s * 1e9))
    recorder.finish()
    return [record.path for record in recorder.records]


@pytest.mark.parametrize("old", ["before", "during"])
def test_a_boot_a_power_on_command_cut_short_is_not_timed_from_it(tmp_path: Path,
                                                                  old: str) -> None:
    """A boot began while the command ran, and another began soon after it returned: the
    first was the board's earlier boot, cut short by the switch; the second opens a session of
    its own at the command's start, timed from there."""
    first, second = pressed(tmp_path, old)
    cut = first_boot(first)
    assert cut.zero is None and cut.zero_unknown is not None
    assert "started the next boot (session " in cut.zero_unknown
    assert "which cut this one short" in cut.zero_unknown
    restarted = first_boot(second)
    assert restarted.zero is not None and restarted.zero.what.startswith(
        "power-on via `press`, which ran 80 ms from here")
    rows = table_rows(restarted)
    assert rows[0].milestone.id == ZERO_ID
    assert rows[1].milestone.id == "bootloader"
    assert rows[1].elapsed_s == pytest.approx(0.3, abs=1e-3)


def test_a_power_on_command_on_a_silent_board_owns_the_bytes_before_its_return(
        tmp_path: Path) -> None:
    """Nothing came before the press: the first bytes, arriving while the command still ran
    (the switch came early in it), are the boot it started, timed from its start."""
    [path] = pressed(tmp_path, "none")
    boot = first_boot(path)
    assert boot.zero is not None and boot.zero_unknown is None
    assert table_rows(boot)[1].elapsed_s == pytest.approx(0.03, abs=1e-3)


def test_a_board_still_printing_after_the_command_returned_has_no_time_zero(
        tmp_path: Path) -> None:
    """The board was printing when the command ran and no boot followed: what came after
    may be the earlier boot still running, so nothing is timed from the press."""
    start = time.monotonic_ns()
    recorder = Recorder(load_profile("linux"), tmp_path, {"label": "t"},
                        StopRule(("login",)), start_ns=start)
    press = start + 500_000_000
    recorder.stamp("power", press, state="on", via="`press`", ran_ms=80.0)
    recorder.feed(b"[    5.000000] still running\r\n", press - 10_000_000)
    for t_s, data in boot_chunks(0.0)[:2]:
        recorder.feed(data, press + 20_000_000 + int(t_s * 1e9))
    recorder.finish()
    boot = first_boot(recorder.records[0].path)
    assert boot.zero is None and boot.zero_unknown is not None
    assert "it may be the earlier boot still running" in boot.zero_unknown


def test_compare_counts_from_time_zero_only_when_every_boot_has_one(tmp_path: Path) -> None:
    with_zero = [first_boot(powered(tmp_path / f"z{i}.jsonl")) for i in range(2)]
    without = first_boot(write_session(tmp_path / "p.jsonl", boot_chunks()))
    both = [compare.Entry(f"z{i}", f"z{i}", boot) for i, boot in enumerate(with_zero)]
    columns = compare.build_columns(both)
    assert columns[0].values["login"] == [pytest.approx(1.525)]
    assert "time zero" in (compare.zero_note(both) or "")
    mixed = [both[0], compare.Entry("p", "p", without)]
    columns = compare.build_columns(mixed)
    assert columns[0].values["login"] == [pytest.approx(1.5)]   # both from the first byte
    note = compare.zero_note(mixed)
    assert note is not None and "from each boot's first byte" in note and "p#1" in note
    none = [compare.Entry("p", "p", without), compare.Entry("q", "q", without)]
    assert compare.zero_note(none) is None


def test_compare_command_says_where_times_count_from(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    zero = powered(tmp_path / "z.jsonl", label="a")
    passive = write_session(tmp_path / "p.jsonl", boot_chunks(), label="b")
    assert main(["compare", str(zero), str(passive)]) == 0
    assert "not from time zero: 1 of 2 boots have none (p.jsonl#1" in capsys.readouterr().err


def test_report_waterfall_starts_with_the_phase_before_the_first_byte(tmp_path: Path) -> None:
    path = powered(tmp_path / "s.jsonl")
    _, analysis = load(path)
    part = Part(path.name, {"kind": "session"}, analysis)
    (_, bars), = waterfalls(part)
    assert bars[0].label == "zero → bootloader" and bars[0].start == 0.0
    assert bars[0].end == pytest.approx(0.025) and bars[0].kind == "firmware"
    page = render(Report([part]), "html")
    assert "power-on via NetworkPowerPort (place board3)" in page
