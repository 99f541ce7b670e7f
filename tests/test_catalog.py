"""Session summaries (shared by `bootlab sessions` and the sessions screen) and relabelling
by an appended meta record."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.paths import example_sessions

from bootlab.core.analysis.catalog import settings_text, summarize, summarize_all
from bootlab.core.capture.session import append_meta, load_session


def test_summary_of_a_bundled_boot() -> None:
    path = example_sessions("bootdelay0")[0]
    summary = summarize(path)
    assert (summary.label, summary.board, summary.error) == ("bootdelay0", "qemu-virt-a57", None)
    assert summary.total_s == summary.milestones["login"] and 3 < summary.total_s < 4
    assert next(iter(summary.milestones)) == "bootloader" and summary.settings == "bootdelay=0"
    assert summary.matches(["BOOTDELAY", "qemu"]) and not summary.matches(["quiet"])
    assert summary.to_json()["total_s"] == summary.total_s


def test_a_missing_file_is_an_error_summary(tmp_path: Path) -> None:
    [summary] = summarize_all([tmp_path / "gone.jsonl"])
    assert summary.error is not None and "no such file" in summary.error
    assert summary.to_json() == {"path": str(tmp_path / "gone.jsonl"), "error": summary.error}


def test_settings_text() -> None:
    assert settings_text({"bootloader": {"bootdelay": "0"}, "cmdline": "console=ttyAMA0 quiet"}) \
        == "bootdelay=0, cmdline: console=ttyAMA0 quiet"
    assert settings_text({"bootloader": {}, "cmdline": None}) == ""
    assert settings_text(None) == ""


def test_append_meta_relabels_and_the_newest_wins(tmp_path: Path) -> None:
    path = tmp_path / "boot.jsonl"
    shutil.copy(example_sessions("quiet")[0], path)
    before = load_session(path)
    append_meta(path, label="first")
    append_meta(path, label="second")
    after = load_session(path)
    assert after.label == "second" and after.chunks == before.chunks and not after.notices


def test_append_meta_after_a_cut_off_record_keeps_both_readable(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(example_sessions("quiet")[0].read_bytes()[:5000])
    append_meta(path, label="cut")
    session = load_session(path)
    assert session.label == "cut"
    assert session.notices and "unreadable record" in session.notices[0]
