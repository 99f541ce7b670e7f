"""The A/B loop `bootlab ab` and the app share (bootlab/control/abrun.py): the command line
against a fake board on a real pty, the report, run names, and the app's pending settings as a
variant spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.fake_board import DEFAULT_ENV, run_cli_on_fake_board
from support.pty_pair import Pty

from bootlab.cli import main
from bootlab.control.abpower import power_lines, recorded_spread
from bootlab.control.abrun import ab_judging, choices_spec, report, run_name
from bootlab.core.analysis.goals import Goal
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.abfiles import ab_sessions
from bootlab.core.board.abplan import ABState, load_or_create, parse_spec
from bootlab.core.board.settings import load_settings
from bootlab.core.capture.session import load_session
from bootlab.exitcodes import NOT_IN_FORCE


def test_ab_command_boots_interleaved_and_reports(pty_pair: Pty, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", "quiet", "--boots", "2", "--seed", "3",
                                        "--pace-ms", "1")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "variant quiet: setenv bootargs '" in err and "boot 4/4: " in err
    # First run on this port: one setup boot of the board as it is learns it, then 4 measured.
    assert "no earlier boot on this port: booting the board as it is once" in err
    assert board.commands.count("boot") == 5
    (learned,) = [load_session(p) for p in tmp_path.glob("*-setup-boot-*.jsonl")]
    assert learned.meta["role"] == "boot" and "ab" not in learned.meta
    # One verdict, at the goal; the other milestones Bonferroni-adjusted and named so.
    verdict = out.split("verdict, at the goal login (against base; one per variant):\n")[1]
    assert verdict.startswith("quiet: ") and "(95% CI " in verdict.splitlines()[0]
    assert "2+2 boots)" in verdict.splitlines()[0]
    assert "other milestones, no verdicts (Bonferroni for " in out
    assert "to login (" not in out.split("other milestones")[1]
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
    # compare takes the run's first variant as its reference, though quiet booted first.
    assert state.plan[0][0] == "quiet"
    for paths in ([tmp_path / "ab-ab.json"], sorted(ab_sessions([tmp_path]))):
        assert main(["compare", *map(str, paths)]) == 0
        head = capsys.readouterr().out.splitlines()[0].split()
        assert head[1:] == ["base", "(2)", "quiet", "(2)"]
    # Each boot proved its variant: quiet's kernel lines gone, the base's command line without.
    assert "quiet: quiet in force (no kernel info line (Booting Linux, Linux version, Run " \
        "/init) between Starting kernel and user space), 2 of 2 boots: 'Starting kernel ...'" \
        in out
    assert "base: quiet not in force (no quiet on the command line the kernel printed), 2 of 2 " \
        "boots: '[    0.000000] Kernel command line: console=ttyAMA0,115200 " in out
    assert result.evidence_text() in out and not result.left_out
    # login is found alike in both variants; init is not (quiet drops `Run /init`): said so.
    assert not result.caveats and "caveat" not in out
    to_init = report(state, load_profile("linux"), "first-byte", goal=Goal(("init",)))
    (caveat,) = to_init.caveats
    assert caveat.startswith("init is found on different lines (base: ")
    assert f"\ncaveat: {caveat}\n" in to_init.evidence_text()
    verified = [load_session(tmp_path / n).meta["verified"] for n in state.done.values()]
    assert all(len(v) == 1 and v[0]["label"] == "quiet" for v in verified)


def test_a_setting_lost_behind_bootlabs_back_stops_the_run(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Planted: the board's boot script sets its own bootargs, so the setenv of quiet is lost.
    # The base boots first (seed 0) and is kept; the quiet boot stops the run.
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", "quiet", "--boots", "2", "--seed", "0",
                                        "--pace-ms", "1", script_bootargs=DEFAULT_ENV["bootargs"])
    out, err = capsys.readouterr()
    assert code == NOT_IN_FORCE and out == ""
    message = err.splitlines()[-1]
    assert message.startswith("bootlab: not in force: quiet run 1: expected quiet in force, the "
                              "boot shows it not in force: no quiet on the command line the "
                              "kernel printed (line ")
    assert "Kernel command line: console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro " \
        "rootwait'" in message
    assert "kernel arguments come from the U-Boot variable bootargs" in message
    assert "/boot.scr on virtio 0:1 runs at boot" in message
    assert "left out of the statistics" in message
    state = ABState.load(tmp_path / "ab-ab.json")
    (lost,) = state.contradicted.items()
    assert lost[0] == ("quiet", 1) and ("quiet", 1) not in state.done
    assert list(state.done) == [("base", 1)] and board.commands.count("boot") == 3  # + setup
    session = load_session(tmp_path / lost[1])
    assert session.meta["ab"]["variant"] == "quiet"
    assert session.meta["verified"][0]["shown"] == "not in force"
    # A contradicted boot counted as done anyway is left out of the statistics.
    state.mark_done("quiet", 1, lost[1])
    result = report(state, load_profile("linux"), "first-byte")
    assert result.left_out == (lost[1],)
    assert [c.boots for c in result.columns] == [1]           # the base boot alone
    assert f"left out (a setting against its variant): {lost[1]}" in result.evidence_text()


def test_proc_cmdline_read_after_login_where_the_log_cannot_tell(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Both variants are quiet: the missing kernel lines cannot tell whether loglevel=3 was on.
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "q:quiet",
                                        "--variant", "qll:quiet,loglevel=3", "--boots", "1",
                                        "--seed", "1", "--pace-ms", "1")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "q: loglevel=3 not in force (no loglevel on /proc/cmdline (read after login)), " \
        "1 of 1 boots" in out
    assert "qll: loglevel=3 in force (no kernel info line between Starting kernel and user " \
        "space" in out
    assert [c.split(";")[0] for c in board.shell_commands].count("cat /proc/cmdline") == 1
    (q,) = [load_session(p) for p in tmp_path.glob("*-q-*.jsonl")]
    assert q.meta["outputs"]["cat /proc/cmdline"].endswith("rootwait quiet")


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


def test_until_decided_judges_each_look_and_stops(pty_pair: Pty, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # bootdelay=0 saved and reset: the fake board's 2-"second" countdown (0.2 s) disappears.
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", "bd0:bootdelay=0", "--persist",
                                        "--until-decided", "--max-boots", "5", "--seed", "3",
                                        "--pace-ms", "1")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err.startswith("bootlab: power: no spread known yet (0 recorded boots")
    state = ABState.load(tmp_path / "ab-ab.json")
    assert state.until is not None and state.boots == 5 and state.finished
    judged = state.until.judged
    looks = [line for line in err.splitlines() if "bd0: look " in line]
    assert looks == [f"bootlab: {line}" for j in judged for line in j.lines]
    # Looks after 3 and 5 boots each; 0.2 s against ms of noise decides at the first unless
    # the host is busy.
    assert [j.boots for j in judged] == [3, 5][:len(judged)]
    assert judged[-1].decided or judged[-1].boots == 5
    rounds = judged[-1].boots
    assert board.commands.count("reset") == len(state.done) == 2 * rounds
    assert f"stopping after {rounds} boots per variant" in err
    assert "verdict, at the goal login" in out and out.count("\nbd0: look ") == len(judged)
    assert f"after {rounds} boots per variant ({2 * rounds} in all; budget 5 each)" in out
    if judged[-1].decided:                           # at the last look's level: 97% or 98%
        level = state.design.level(len(judged) - 1) * 100
        assert "bd0: faster to login by " in out and f"({level:.4g}% CI " in out
    # The next run on this port knows the spread: its power table comes from these boots.
    sd, boots = recorded_spread(tmp_path, pty_pair.name, load_profile("linux"), "first-byte",
                                Goal())
    assert boots == 2 * rounds and sd is not None and 0 < sd < 0.2
    table = power_lines((sd, boots), state.design, 0.05)
    assert table[0].startswith(f"power, from {boots} recorded boots of this port (goal spread")
    assert any("a difference of 500 ms needs 2 boots per variant" in line for line in table)
    assert recorded_spread(tmp_path, "/dev/other", load_profile("linux"), "first-byte",
                           Goal()) == (None, 0)


def test_milestones_before_a_setting_can_act(tmp_path: Path) -> None:
    variants = [("base", ""), ("quiet", "quiet"), ("bd0", "bootdelay=0")]
    state = load_or_create(tmp_path, "s", variants, 2, seed=1)
    judging = ab_judging(state, load_profile("linux"), load_settings(), [], [], "login", 0.05)
    # quiet acts from the kernel's start: Starting kernel and all before it cannot move
    assert {"spl", "autoboot", "starting_kernel"} <= judging.early["quiet"]
    assert "linux" not in judging.early["quiet"] and "login" not in judging.early["quiet"]
    # bootdelay acts in the bootloader: only the firmware before it cannot move
    assert "spl" in judging.early["bd0"] and "autoboot" not in judging.early["bd0"]
    assert judging.goal_level == pytest.approx(0.975)   # two variants against the first

