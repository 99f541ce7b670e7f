"""The A/B loop `bootlab ab` and the app share (bootlab/control/abrun.py): the command line
against a fake board on a real pty, the report, run names, and the app's pending settings as a
variant spec."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from conftest import Pty
from fake_board import FakeBoard

from bootlab.cli import main
from bootlab.control.abrun import ab_sessions, choices_spec, report, run_name
from bootlab.core.abplan import ABState, load_or_create, parse_spec
from bootlab.core.profiles import load_profile
from bootlab.core.session import load_session
from bootlab.core.settings import load_settings


def run_cli_on_fake_board(pair: Pty, folder: Path, *argv: str) -> tuple[int, FakeBoard]:
    """Run bootlab on the pty; the board powers on once bootlab has opened it (as QEMU's
    console server does when its client connects)."""
    board = FakeBoard(pair)
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(
        [*argv[:1], pair.name, *argv[1:], "--sessions", str(folder), "--timeout", "20"])))
    thread.start()
    deadline = time.monotonic() + 10
    while not list(folder.glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.01)
    board.power_on()
    thread.join(timeout=120)
    board.power_off()
    assert codes, "bootlab did not finish"
    return codes[0], board


def test_ab_command_boots_interleaved_and_reports(pty_pair: Pty, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", "quiet", "--boots", "2", "--seed", "3",
                                        "--pace-ms", "1")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "variant quiet: setenv bootargs '" in err and "boot 4/4: " in err
    assert board.commands.count("boot") == 4
    assert "quiet: " in out and "to login (95% CI" in out and "2+2 boots)" in out
    state = ABState.load(tmp_path / "ab-ab.json")
    assert len(state.done) == 4 and state.next_run() is None
    # Each boot is a session tagged with its run, closed "done"; setup dialogues are untagged.
    for name in state.done.values():
        session = load_session(tmp_path / name)
        assert session.meta["role"] == "boot" and session.meta["ab"]["name"] == "ab"
        assert any(e.get("reason") == "done" for e in session.events)
    setups = [load_session(p) for p in tmp_path.glob("*-setup-*.jsonl")]
    assert setups and not any(s.meta.get("ab") for s in setups)
    # The report: variants in the order given, quiet faster to login.
    result = report(state, load_profile("linux"), "first-byte")
    assert result.variants == ("base", "quiet")
    assert [c.name for c in result.columns] == ["base", "quiet"]
    login = next(row for row in result.rows() if row.milestone == "login")
    base_s, quiet_s = login.medians
    assert base_s is not None and quiet_s is not None and quiet_s < base_s
    assert login.differences[0].startswith("quiet: ") and "2+2 boots" in login.differences[0]
    assert ab_sessions([tmp_path]) == ab_sessions([tmp_path / "ab-ab.json"])
    assert sorted(ab_sessions([tmp_path])) == sorted(tmp_path / n for n in state.done.values())


def test_run_name_resumes_an_unfinished_run_and_skips_others(tmp_path: Path) -> None:
    variants = [("base", ""), ("quiet", "quiet")]
    assert run_name(tmp_path, "quiet", variants, 2) == "quiet-1"
    first = load_or_create(tmp_path, "quiet-1", variants, 2, seed=1)
    assert run_name(tmp_path, "quiet", variants, 2) == "quiet-1"        # unfinished: resume
    assert run_name(tmp_path, "quiet", variants, 3) == "quiet-2"        # other boots
    for variant, run in first.plan:
        first.mark_done(variant, run, f"{variant}-{run}.jsonl")
    assert run_name(tmp_path, "quiet", variants, 2) == "quiet-2"        # finished: a new one
    (tmp_path / "ab-quiet-2.json").write_text("not json")
    assert run_name(tmp_path, "quiet", variants, 2) == "quiet-3"        # unreadable: skipped
    assert len(run_name(tmp_path, "x" * 60, variants, 2)) <= 40


@pytest.mark.parametrize(("chosen", "name", "spec", "left_out"), [
    ({"quiet": True}, "quiet", "quiet", 0),
    ({"bootdelay": True, "quiet": True}, "bootdelay+quiet", "bootdelay,quiet", 0),
    ({"bootdelay": "1"}, "bootdelay", "bootdelay=1", 0),
    ({"quiet": False}, "no-quiet", "cmdline-=quiet", 0),
    ({"verify": False}, "no-verify", "uboot:verify=", 0),
    ({"bootdelay": False}, "pending", "", 1),                  # off = leave the board's value
    ({"quiet": True, "bootdelay": False}, "quiet", "quiet", 1),
])
def test_pending_choices_as_a_variant(chosen: dict[str, bool | str], name: str, spec: str,
                                      left_out: int) -> None:
    got_name, got_spec, notes = choices_spec(load_settings(), chosen)
    assert (got_name, got_spec, len(notes)) == (name, spec, left_out)
    parse_spec(got_spec)  # what the A/B state stores must read back

