"""A boot's numbers only from bytes that belong to that boot, with no gap inside
(bootlab/core/analysis/gaps.py, the recorder's time zero): bytes stamped before bootlab
started the boot are kept apart, a gap makes the boot incomplete in the phase table, the
listing, comparisons and budgets."""

from __future__ import annotations

import time
from pathlib import Path

from support.paths import example_sessions

from bootlab.core.analysis import budgets, compare
from bootlab.core.analysis.catalog import summarize
from bootlab.core.analysis.gaps import mark, session_gaps
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.phases import BootGap, phase_rows
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source
from bootlab.core.recording.recorder import Recorder, StopRule

PROFILE = load_profile("linux")
BOOT = load_session(example_sessions("default")[0])


def record(folder: Path, before: bytes = b"", gap_at: int | None = None) -> Path:
    """The example boot fed to a recorder as bootlab started it at time zero: `before`
    stamped earlier, a port lost at chunk `gap_at` for 0.5 s."""
    zero = time.monotonic_ns()
    recorder = Recorder(PROFILE, folder, {"label": "t"}, StopRule(("login",)),
                        start_ns=zero - 10**9, auto_split=False)
    recorder.start_session(zero, role="boot")
    if before:
        recorder.feed(before, zero - 50_000_000)           # arrived, but from before zero
    for index, (t_ns, data) in enumerate(BOOT.chunks):
        if index == gap_at:
            recorder.lost(zero + t_ns - 1, "the console server went away")
            recorder.back(zero + t_ns + 500_000_000, zero + t_ns - 1)
        recorder.feed(data, zero + t_ns + (500_000_000 if gap_at is not None
                                            and index >= gap_at else 0))
    recorder.finish()
    return recorder.records[-1].path


def test_bytes_from_before_the_boot_are_kept_apart_never_matched(tmp_path: Path) -> None:
    stale = b"board login: \r\nroot@board:~# reboot\r\n"
    path = record(tmp_path, before=stale)
    session = load_session(path)
    assert [data for _, data in session.before] == [stale]
    assert session.before[0][0] < 0 and session.data == BOOT.data
    source = open_source(path)
    analysis = analyze_source(source, PROFILE)
    rows = phase_rows(analysis.boots[0])
    assert rows[0].milestone.id == "bootloader" and rows[-1].milestone.id == "login"
    assert rows[-1].elapsed_s is not None and rows[-1].elapsed_s > 3
    assert any(f"{len(stale)} bytes arrived before this boot's start" in note
               for note in analysis.notices)


def test_a_gap_inside_a_boot_leaves_no_total_and_no_phase_across_it(tmp_path: Path) -> None:
    middle = len(BOOT.chunks) // 2
    path = record(tmp_path, gap_at=middle)
    meta = load_session(path).meta
    (gap,) = session_gaps(meta)
    assert gap.seconds is not None and abs(gap.seconds - 0.5) < 0.01
    analysis = analyze_source(open_source(path), PROFILE)
    (boot,) = analysis.boots
    assert boot.incomplete is not None and "no phase across the gap" in boot.incomplete
    rows = phase_rows(boot)
    before = [r for r in rows if r.milestone.host_s is not None
              and r.milestone.host_s < gap.at_s]
    after = rows[len(before):]
    assert before and after
    assert all(r.elapsed_s is not None for r in before)        # measured up to the gap
    assert all(r.elapsed_s is None for r in after)             # no total
    assert before[-1].duration_s is None and after[0].delta_s is None   # nothing across it
    assert any(r.delta_s is not None for r in after[1:])       # phases after it, within it
    summary = summarize(path)
    assert summary.total_s is None and summary.incomplete == boot.incomplete
    # left out of a comparison, named; kept (one side of the gap) only when asked
    whole = analyze_source(open_source(example_sessions("default")[1]), PROFILE).boots[0]
    entries = [compare.Entry("gap", "x", boot), compare.Entry("whole", "x", whole)]
    assert compare.incomplete(entries) == [f"gap#1: {boot.incomplete}"]
    (column,) = compare.build_columns(entries)
    assert column.boots == 1
    (column,) = compare.build_columns(entries, include_incomplete=True)
    assert column.boots == 2 and len(column.values["login"]) == 1
    # a budget on a milestone after the gap is not measured, and says why
    budget_file = budgets.parse_budgets('[budgets]\nlogin = "20s"\n', "b.toml")
    (verdict,) = budgets.evaluate(budget_file, boot)
    assert not verdict.passed and verdict.message().startswith("login not measured: the "
                                                               "boot is incomplete")


def test_a_gap_before_a_boot_that_shows_no_beginning_loses_its_start() -> None:
    analysis = analyze_source(open_source(example_sessions("default")[0]), PROFILE)
    (boot,) = analysis.boots
    start = boot.start_host_s or 0.0
    mark([boot], [BootGap(start - 1.0, 0.5, "lost")])
    assert boot.gap is None                     # its first line is U-Boot's banner: whole
    kernel_only = [m for m in boot.milestones if m.stage in ("kernel", "userspace")]
    boot.milestones, boot.first_line = kernel_only, kernel_only[0].line
    mark([boot], [BootGap(start - 1.0, 0.5, "lost")])
    assert boot.gap is not None and boot.gap.start_lost
    assert all(row.elapsed_s is None for row in phase_rows(boot))   # from a lost start
    assert phase_rows(boot, kernel_only[0].id)[-1].elapsed_s is not None   # from a milestone


def test_old_sessions_gaps_come_from_their_events() -> None:
    events = [{"t": 2_000_000_000, "event": "gap", "reason": "peer closed"},
              {"t": 3_000_000_000, "event": "reconnect", "gap_s": 1.0}]
    assert session_gaps({}, events) == [BootGap(2.0, 1.0, "peer closed")]
