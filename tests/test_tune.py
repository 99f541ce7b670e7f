"""`bootlab tune` (bootlab/control/tuneloop.py, bootlab/core/board/tuneplan.py): the state on disk,
the decision rules, the candidates, and a whole short tune on the fake board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_board import DEFAULT_ENV, run_cli_on_fake_board
from support.paths import example_sessions
from support.pty_pair import Pty

from bootlab.commands import tune as tune_command
from bootlab.control import abrun
from bootlab.control.tuneloop import (
    BASELINE_SPREAD,
    _expected_gone,
    _removed_by,
    baseline_settled,
    candidates,
    decide,
)
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.settings import load_settings
from bootlab.core.board.tuneplan import (
    TuneState,
    TuneStateError,
    TuneStep,
    TuneStepDone,
    state_path,
)
from bootlab.exitcodes import NOT_MET, OK


def _state(folder: Path) -> TuneState:
    state = TuneState(state_path(folder, "t"), "t", "/dev/ttyX", "login", 3.0, 2.0, True,
                      {"bootdelay": "2", "bootargs": "console=ttyAMA0 ro"}, ["quiet"],
                      [TuneStep("quiet", "Kernel console output", 1302.0, "t-1", "kept",
                                "saves 900 ms", 900.0, 850.0, 950.0, 3, ("quiet: in force",)),
                       TuneStep("verify", "Image checksum", 326.0, "t-2")],
                      ["a.jsonl"], ["b.jsonl"], [("Slow initcalls", 120.0)],
                      ["setenv bootargs 'console=ttyAMA0 ro quiet'", "saveenv"])
    state.save()
    return state


def test_state_round_trip_and_resume(tmp_path: Path) -> None:
    state = _state(tmp_path)
    loaded = TuneState.load(tmp_path / "tune-t.json")
    assert loaded == state
    assert loaded.spec() == "quiet" and loaded.tried() == {"quiet", "verify"}
    assert loaded.steps[-1].outcome == "running"   # the step a resume carries on with
    loaded.steps[-1].outcome = "rejected"
    loaded.kept.append("bootdelay=0")
    loaded.save()
    assert TuneState.load(loaded.path).spec() == "quiet,bootdelay=0"


@pytest.mark.parametrize(("damage", "said"), [
    (lambda text: text[:40], "not a readable tune state"),
    (lambda text: text.replace('"bootlab-tune"', '"bootlab-ab"'), "no 'bootlab-tune' format"),
    (lambda text: text.replace('"kept",', '"won",', 1), "step outcome 'won'"),
    (lambda text: text.replace('"kept": [\n  "quiet"', '"kept": [\n  "quiet,,x"'),
     "is empty"),
])
def test_damaged_state_says_why(tmp_path: Path, damage: object, said: str) -> None:
    state = _state(tmp_path)
    assert callable(damage)
    state.path.write_text(damage(state.path.read_text()))
    with pytest.raises(TuneStateError, match="--restore") as error:
        TuneState.load(state.path)
    assert said in str(error.value)


def test_names_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="1-30"):
        state_path(tmp_path, "x" * 31)
    with pytest.raises(ValueError, match="1-30"):
        state_path(tmp_path, "../x")


def test_decide() -> None:
    assert decide((200.0, 120.0, 280.0), "faster", 5, [], 0.05) == \
        ("kept", "saves 200 ms [120, 280] after 5 boots a side")
    outcome, why = decide((10.0, -20.0, 40.0), "within", 5, [], 0.05)
    assert outcome == "rejected" and "within ±50 ms" in why
    assert decide((-90.0, -150.0, -30.0), "slower", 3, [], 0.05)[0] == "rejected"
    assert decide((80.0, -30.0, 190.0), "undecided", 8, [], 0.05)[1].startswith("undecided")
    # Proven but smaller than the saving that matters: a setting is a change, not kept for less.
    outcome, why = decide((6.0, 2.0, 10.0), "faster", 3, [], 0.05)
    assert outcome == "rejected" and "smaller than the 50 ms that matters" in why
    assert decide(None, "undecided", 1, [], 0.05) == \
        ("rejected", "no interval after 1 boots a side")
    # A lost milestone outweighs any saving.
    assert decide((900.0, 800.0, 1000.0), "faster", 3, ["root_mounted"], 0.05) == \
        ("harmful", "its boots lost root_mounted")


def test_candidates_rank_skip_and_list_rebuilds(tmp_path: Path) -> None:
    sessions = example_sessions("default")[:1]
    settings = load_settings([])
    profile = load_profile("linux")
    state = TuneState(state_path(tmp_path, "t"), "t", "p", "login")
    found, rebuild = candidates(state, sessions, settings, profile)
    items = [item for item, _ in found]
    assert items[:4] == ["bootdelay=0", "quiet", "verify", "silent"]
    predicted = [rec.predicted_ms for _, rec in found if rec is not None]
    assert predicted == sorted(predicted, reverse=True)
    assert ("Init to login", pytest.approx(184, abs=1)) in rebuild
    # Kept and tried items are not offered again; --try items come first.
    state.kept.append("quiet")
    state.steps.append(TuneStep("verify", "", 0.0, outcome="rejected"))
    found, _ = candidates(state, sessions, settings, profile,
                          ("loglevel=3", "quiet", "bootdelay=0"))
    items = [item for item, _ in found]
    assert items[0] == "loglevel=3" and found[0][1] is None
    # A tried item bootlab recommends too comes with its recommendation's prediction.
    assert items[1] == "bootdelay=0" and found[1][1] is not None and \
        found[1][1].predicted_ms > 1000
    assert "quiet" not in items and "verify" not in items and "bootdelay=0" in items


def test_a_short_tune_keeps_quiet_rejects_a_no_op_and_undoes_a_harmful_setting(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, board = run_cli_on_fake_board(
        pty_pair, tmp_path, "tune", "--try", "rootfstype=xfs", "--try", "uboot:tune_noop=1",
        "--max-boots", "3", "--baseline-boots", "2", "--pace-ms", "1", "--persist")
    out, err = capsys.readouterr()
    assert code == OK, err
    state = TuneState.load(tmp_path / "tune-tune.json")
    steps = {step.setting: step for step in state.steps}
    assert state.finished and state.stopped_why == "nothing predicted is left to try"
    # The planted wrong root fs type: its boots lost the root mount; undone.
    assert steps["rootfstype=xfs"].outcome == "harmful"
    assert "root_mounted" in steps["rootfstype=xfs"].why
    # A variable nothing reads: no saving, rejected.
    assert steps["uboot:tune_noop=1"].outcome == "rejected"
    # quiet: a real saving, proven and kept, with its interval above zero and its evidence.
    quiet = steps["quiet"]
    assert quiet.outcome == "kept" and quiet.boots == 3
    assert quiet.low_ms is not None and quiet.low_ms > 0 and quiet.saving_ms is not None
    assert any("quiet in force" in line for line in quiet.evidence)
    # The countdown the fake board really waits (--persist measures autoboots): kept too.
    assert steps["bootdelay=0"].outcome == "kept"
    assert sorted(state.kept) == ["bootdelay=0", "quiet"], \
        [(s.setting, s.outcome, s.why, s.low_ms, s.high_ms) for s in state.steps]
    assert len(state.baseline) == 2 and len(state.final) == 3
    # --persist: the final configuration is saved, and only it.
    assert board.saved["bootargs"] == DEFAULT_ENV["bootargs"] + " quiet"
    assert board.saved["bootdelay"] == "0"
    assert "tune_noop" not in board.saved and "rootfstype=ext4" in board.saved["bootargs"]
    assert state.commands[-1] == "saveenv" and "setenv bootdelay 0" in state.commands
    assert state.env_backup["bootargs"] == DEFAULT_ENV["bootargs"]
    said = {tuple(line.split()[:2]) for line in out.splitlines()}
    assert {("harmful", "rootfstype=xfs:"), ("kept", "quiet:"),
            ("rejected", "uboot:tune_noop=1:")} <= said
    assert "to set it by hand (at the U-Boot prompt):" in out and "cut " in out
    assert "step: A/B quiet against the kept settings" in err


def test_the_final_commands_read_the_boot_script_at_the_prompt_not_at_linux(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --persist the last measured boot leaves the board at Linux's login; the final
    commands of a kept kernel parameter need the boot script, read at the U-Boot prompt."""
    code, board = run_cli_on_fake_board(
        pty_pair, tmp_path, "tune", "--max-steps", "1", "--max-boots", "3",
        "--baseline-boots", "2", "--pace-ms", "1",
        env={**DEFAULT_ENV, "loadaddr": "0x40200000"})   # boot.scr can be read: it is
    _, err = capsys.readouterr()
    assert code == OK, err
    state = TuneState.load(tmp_path / "tune-tune.json")
    assert state.kept == ["quiet"] and "quiet" in " ".join(state.commands)
    loads = [c for c in board.commands if c.startswith("load virtio 0:1 ")]
    assert loads and board.commands[-3:] == ["setenv filesize", "setenv fileaddr",
                                             "help saveenv"], \
        board.commands  # the boot script read last, what `load` set deleted again; whether
    # the commands' saveenv can work at all asked last
    assert board.shell_commands == ["reboot -f"] * len(board.shell_commands)


def test_the_budget_stops_the_tune_or_says_it_was_not_met(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 1 us: the fake board prints its whole boot at once, ~1 ms after the `boot` typed
    code, _ = run_cli_on_fake_board(pty_pair, tmp_path, "tune", "--budget", "0.001ms",
                                    "--max-steps", "1", "--max-boots", "3",
                                    "--baseline-boots", "2", "--pace-ms", "1", "--name", "a")
    _, err = capsys.readouterr()
    assert code == NOT_MET, err
    state = TuneState.load(tmp_path / "tune-a.json")
    assert len(state.steps) == 1 and state.stopped_why == "the limit of 1 steps is reached"
    assert "bootlab: the budget is not met: login at " in err and ", budget 1e-06 s" in err
    # A budget the board as it is meets: no step is tried, nothing is changed.
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "tune", "--budget", "100s",
                                        "--baseline-boots", "2", "--pace-ms", "1",
                                        "--name", "b")
    _, err = capsys.readouterr()
    assert code == OK, err
    state = TuneState.load(tmp_path / "tune-b.json")
    assert state.steps == [] and state.stopped_why.startswith("the budget is met: login at ")
    assert not any(c.startswith("setenv") for c in board.commands)


def test_restore_puts_the_environment_back(pty_pair: Pty, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    state = TuneState(state_path(tmp_path, "tune"), "tune", pty_pair.name, "login",
                      persist=True, env_backup={**DEFAULT_ENV, "bootdelay": "5"})
    state.save()
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "tune", "--restore",
                                        "--pace-ms", "1")
    _, err = capsys.readouterr()
    assert code == OK, err
    assert board.saved == {**DEFAULT_ENV, "bootdelay": "5"}
    assert "sent: setenv bootdelay 5" in err and board.commands[-1] == "saveenv"
    assert json.loads(state.path.read_text())["env_backup"]["bootdelay"] == "5"


def test_a_noisy_baseline_gets_more_boots() -> None:
    steady = [6.70, 6.72, 6.69]
    noisy = [6.2, 7.4, 6.8]
    assert not baseline_settled([], 0, 6)
    assert not baseline_settled(steady[:2], 2, 6)           # three boots first
    assert baseline_settled(steady, 3, 6)                   # a steady board: three are enough
    assert not baseline_settled(noisy, 3, 6)                # a noisy one: boot again ...
    assert baseline_settled([*noisy, 6.9, 6.6, 7.2], 6, 6)  # ... up to the most allowed
    assert baseline_settled(noisy[:2], 2, 2)                # fewer allowed than three
    # Just under and just over the threshold of relative spread.
    assert baseline_settled([10.0 - BASELINE_SPREAD * 9, 10.0, 10.0 + BASELINE_SPREAD * 9],
                            3, 6)
    assert not baseline_settled([10.0 - BASELINE_SPREAD * 11, 10.0,
                                 10.0 + BASELINE_SPREAD * 11], 3, 6)


def test_a_line_the_setting_removes_by_design_is_not_lost() -> None:
    settings = load_settings([])
    removed = _removed_by("verify", settings)
    assert _expected_gone("kernel_verified",
                          "   Verifying Hash Integrity ... sha256+ OK", removed)
    assert not _expected_gone("root_mounted", "VFS: Mounted root (ext4 filesystem)", removed)
    # Silent U-Boot's evidence names the countdown; a root file system type names nothing.
    assert _expected_gone("autoboot", "Hit any key", _removed_by("silent", settings))
    assert _removed_by("rootfstype=xfs", settings) == []


def test_an_interrupted_tune_resumes_where_it_stopped(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ("tune", "--try", "uboot:tune_noop=1", "--max-boots", "3", "--baseline-boots", "2",
            "--pace-ms", "1", "--persist")
    said = tune_command._progress
    decided: list[str] = []

    def interrupt(event: object) -> None:
        """Ctrl-C after the first boot of the tune's second step."""
        said(event)  # type: ignore[arg-type]
        if isinstance(event, TuneStepDone):
            decided.append(event.step.setting)
        if decided and isinstance(event, abrun.BootFinished):
            raise KeyboardInterrupt

    monkeypatch.setattr(tune_command, "_progress", interrupt)
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, *argv)
    capsys.readouterr()
    assert code != OK
    stopped = TuneState.load(tmp_path / "tune-tune.json")
    assert not stopped.finished and len(stopped.baseline) == 2
    assert (stopped.steps[0].setting, stopped.steps[0].outcome) == \
        ("uboot:tune_noop=1", "rejected")
    assert len(stopped.steps) == 2 and stopped.steps[1].outcome == "running"
    second = json.loads((tmp_path / "ab-tune-2.json").read_text())["done"]
    assert len(second) == 1
    monkeypatch.setattr(tune_command, "_progress", said)
    code, _ = run_cli_on_fake_board(pty_pair, tmp_path, *argv, env=board.saved)
    _, err = capsys.readouterr()
    assert code == OK, err
    assert "resuming tune 'tune'" in err
    assert "baseline: 2 boots" in err and "board, run 1 of 2" not in err   # not booted again
    state = TuneState.load(tmp_path / "tune-tune.json")
    assert state.finished and state.baseline == stopped.baseline
    assert [s.setting for s in state.steps][:2] == [s.setting for s in stopped.steps]
    assert len(state.tried()) == len(state.steps)          # no step run twice
    assert state.steps[0] == stopped.steps[0]
    # The boot done before the interruption is kept, and the step goes on from it.
    done = json.loads((tmp_path / "ab-tune-2.json").read_text())["done"]
    assert all(entry in done for entry in second)
    assert len(done) == 2 * state.steps[1].boots
    steps = [(s.setting, s.outcome, s.why, s.low_ms, s.high_ms) for s in state.steps]
    assert state.steps[1].outcome in ("kept", "rejected"), steps   # the resumed step decided
    assert state.kept == [s.setting for s in state.steps if s.outcome == "kept"], steps
    assert "bootdelay=0" in state.kept, steps
