"""Driving the board from the app: reboot, apply the pending settings and boot, an A/B run.

Fast tests run the app on a real pty whose other end is a fake U-Boot and Linux
(tests/support/fake_board.py); one test drives the real QEMU board (`board` marker).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.board_bench import PROFILE, Bench, job_done, mark, open_bench, reached, rendered
from support.paths import example_sessions
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Checkbox

from bootlab.commands.parsers import build_console_parser
from bootlab.control.abverify import NotInForce
from bootlab.control.engine import RebootStrategy
from bootlab.core.analysis.phases import phase_rows
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source
from bootlab.exitcodes import BAD_INPUT
from bootlab.session.board_jobs import failure_text
from bootlab.ui.launch import live_app, replay_app, run_live
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.messages import ABFinished, ABLooked, ABProgressed, JobEnded
from bootlab.ui.screens.ab_result import ABResultScreen
from bootlab.ui.screens.board_dialogs import ABDialog, ApplyDialog
from bootlab.ui.widgets.job_bar import JobBar
from bootlab.ui.widgets.settings_panel import SettingsPanel


@pytest.fixture
async def bench(pty_pair: Pty, tmp_path: Path) -> AsyncIterator[Bench]:
    async with open_bench(pty_pair, tmp_path) as opened:
        yield opened


async def test_apply_sends_what_it_showed_then_boots_and_measures(bench: Bench) -> None:
    screen, pilot, board = bench.screen, bench.pilot, bench.board
    board.kernel_s = 1.0                             # the job still runs when a key is typed
    await mark(bench, "q")
    await pilot.press("P")
    dialog = bench.app.screen
    assert isinstance(dialog, ApplyDialog) and dialog.commands is not None
    shown = list(dialog.commands)
    assert shown == ["setenv bootargs 'console=ttyAMA0,115200 root=/dev/vda2 "
                     "rootfstype=ext4 ro rootwait quiet'"]
    await pilot.press("enter")                       # Send and boot has the focus
    bar = screen.query_one(JobBar)
    await wait_until(pilot, lambda: bar.has_class("-running"), "the job bar")
    screen.console.focus()
    await pilot.press("z")                           # typed during the job: refused
    ended = await job_done(bench)
    assert ended.text.startswith("booted: login") and "after the boot command" in ended.text
    notes = [m.notification.message for m in bench.seen if isinstance(m, Notify)]
    assert any("the board is busy: apply and boot" in note for note in notes)
    assert all(data != b"z" for s in bench.sessions() for _, data in s.sent)
    # U-Boot got exactly what the dialog showed, between printenv and boot.
    assert board.commands == ["printenv", *shown, "boot"]
    assert board.shell_commands == ["reboot -f"]      # found at login: logged in, rebooted
    (setup,) = bench.sessions("setup")
    assert b"reboot -f" in setup.data and b"printenv" in setup.data
    (measured,) = bench.sessions("boot")
    assert measured.data.startswith(b"boot\r\n")
    assert "quiet" in measured.meta["settings"]["cmdline"]
    ids = [m.id for m in analyze(measured.data, PROFILE).milestones]
    assert "login" in ids and "linux" not in ids      # the kernel was quiet
    # The phase pane shows the measured boot, from the boot command on.
    assert reached(screen, "login") and screen.boot_state.rows[0].milestone.id != "bootloader"
    assert screen.query_one(SettingsPanel).pending == {}
    numbers = [line.number for line in screen.console.lines]
    assert numbers == sorted(set(numbers))            # one stream across the new sessions
    assert not bar.has_class("-running")


async def test_reboot_key_restarts_the_board_from_its_shell(bench: Bench) -> None:
    screen, pilot, board = bench.screen, bench.pilot, bench.board
    await pilot.press("ctrl+t", "R")
    ended = await job_done(bench)
    assert "reboot -f at the shell" in ended.text
    # The job ends once the command is sent; the board's thread reads it when it gets there.
    await wait_until(pilot, lambda: board.shell_commands == ["reboot -f"],
                     "the board to read reboot -f", 5)
    await wait_until(pilot, lambda: board.boots == 2 and reached(screen, "login"),
                     "the board to boot again", 20)

    def on_disk() -> bytes:
        (boot,) = bench.sessions("boot")   # on disk up to the last flush (a fraction of a s)
        return boot.data

    def last_milestone() -> str:
        found = analyze(on_disk(), PROFILE).milestones
        return found[-1].id if found else ""

    await wait_until(pilot, lambda: last_milestone() == "login", "the session on disk", 5)
    assert on_disk().startswith(b"reboot -f")          # measured from the command


async def test_ab_run_of_the_pending_setting_shows_progress_and_result(bench: Bench) -> None:
    pilot = bench.pilot
    await mark(bench, "q")
    await pilot.press("T")
    assert isinstance(bench.app.screen, ABDialog)
    await pilot.press("shift+tab", "space")           # a fixed run, not until decided
    await pilot.press("tab", "backspace", "2", "enter")   # 2 boots per variant, not 5
    await wait_until(pilot, lambda: any(isinstance(m, ABFinished) for m in bench.seen),
                     "the A/B run", 120)
    await job_done(bench)
    steps = [m.event for m in bench.seen if isinstance(m, ABProgressed)]
    assert [(m.step.number, m.step.total) for m in steps] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert steps[0].last is None and all(m.last and "login at" in m.last for m in steps[1:])
    assert sorted(m.step.variant for m in steps) == ["base", "base", "quiet", "quiet"]
    result = bench.app.screen
    assert isinstance(result, ABResultScreen)
    shown = rendered(result.result)
    assert "quiet against base: 2+2 boots" in shown
    assert "verdict:   quiet: " in shown and "2+2 boots)" in shown
    assert "Bonferroni-adjusted" in " ".join(shown.split())
    assert not any(isinstance(m, ABLooked) for m in bench.seen)
    # How each variant's setting was verified, with the line that shows it (lines wrap).
    flat = " ".join(shown.split())
    assert "settings, as each boot showed them: base: quiet not in force (no quiet on the " \
        "command line the kernel printed), 2 of 2 boots: '[ 0.000000] Kernel command line: " \
        "console=ttyAMA0,115200" in flat
    assert "quiet: quiet in force (no kernel info line (Booting Linux, Linux version, Run " \
        "/init) between Starting kernel and user space), 2 of 2 boots: 'Starting kernel ...'" \
        in flat
    state = json.loads((bench.folder / "ab-quiet-1.json").read_text())
    assert len(state["done"]) == 4
    tagged = [s for s in bench.sessions("boot") if s.meta.get("ab")]
    assert sorted(s.meta["ab"]["variant"] for s in tagged) == ["base", "base", "quiet", "quiet"]
    await pilot.press("escape")
    assert isinstance(bench.app.screen, MainScreen)


async def test_ab_run_until_decided_shows_the_interval_narrowing(bench: Bench) -> None:
    pilot, screen = bench.pilot, bench.screen
    await mark(bench, "q")
    await pilot.press("T")
    assert isinstance(bench.app.screen, ABDialog)
    await pilot.press("backspace", "backspace", "5", "enter")    # at most 5 boots each
    await wait_until(pilot, lambda: any(isinstance(m, ABFinished) for m in bench.seen),
                     "the A/B run", 120)
    await job_done(bench)
    looks = [m.event.look for m in bench.seen if isinstance(m, ABLooked)]
    # Looks after 3 and 5 boots each (the budget); quiet saves half a second of 2 ms printk
    # lines, so the first decides unless the host is very busy.
    assert [(look.number, look.boots) for look in looks] == [(1, 3), (2, 5)][:len(looks)]
    assert looks[-1].final and not any(look.final for look in looks[:-1])
    assert looks[-1].decided or looks[-1].boots == 5
    lines = [line for look in looks for line in look.lines]
    assert all(line.startswith(f"quiet: look {n} ({b} boots each, ") for line, n, b in
               zip(lines, (1, 2), (3, 5), strict=False))
    steps = [m.event for m in bench.seen if isinstance(m, ABProgressed)]
    rounds = looks[-1].boots
    assert [m.step.number for m in steps] == list(range(1, 2 * rounds + 1))
    assert {m.step.total for m in steps[:6]} == {6}   # the boots up to the first look
    assert screen.ab_look == lines[-1]               # the job bar showed it
    result = bench.app.screen
    assert isinstance(result, ABResultScreen)
    shown = rendered(result.result)
    assert f"quiet against base: {rounds}+{rounds} boots" in shown
    assert "verdict:   quiet: " in shown and all(line in shown for line in lines)
    assert f"after {rounds} boots per variant ({2 * rounds} in all; budget 5 each)" in shown
    state = json.loads((bench.folder / "ab-quiet-1.json").read_text())
    assert state["boots"] == 5 and len(state["done"]) == 2 * rounds
    assert [line for look in state["until"]["looks"] for line in look["lines"]] == lines


async def test_board_keys_are_off_in_a_replay() -> None:
    app = replay_app(example_sessions("default")[0], speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main_screen(app)
        await pilot.press("tab", "q", "P", "R", "T")
        assert isinstance(app.screen, MainScreen)
        for action in ("apply_pending", "reboot_board", "ab_pending"):
            assert screen.check_action(action, ()) is None
        titles = [c.title for c in screen.system_commands()]
        assert "board: Recommendations" in titles and "board: Reboot now" not in titles


@pytest.mark.board
async def test_bootdelay_0_from_the_app_on_the_real_board(board_url: str,
                                                          tmp_path: Path) -> None:
    app, link = live_app(board_url, 115200, PROFILE, tmp_path, label="app")
    seen: list[Message] = []
    async with app.run_test(size=(130, 40), message_hook=seen.append) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: reached(screen, "login"), "the cold boot", 120)
        await pilot.press("ctrl+t", "tab", "d")
        assert screen.query_one(SettingsPanel).pending == {"bootdelay": True}
        await pilot.press("P")
        dialog = app.screen
        assert isinstance(dialog, ApplyDialog) and dialog.persist   # acts before the prompt
        assert dialog.commands == ["setenv bootdelay 0", "saveenv"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(isinstance(m, JobEnded) for m in seen),
                         "apply and boot", 240)
        (ended,) = [m.event for m in seen if isinstance(m, JobEnded)]
        assert ended.outcome == "done", ended.text
        rows = {row.milestone.id: row for row in screen.boot_state.rows}
        assert {"bootloader", "autoboot", "kernel_loaded", "starting_kernel", "init",
                "login"} <= set(rows)
    assert link.wait_closed()
    boots = [p for p in sorted(tmp_path.glob("*.jsonl"))
             if load_session(p).meta.get("role") == "boot"]
    session = load_session(boots[-1])
    assert session.meta["settings"]["bootloader"]["bootdelay"] == "0"
    assert session.data.startswith(b"reset")
    source = open_source(boots[-1])
    (boot, *_) = analyze(source.data, PROFILE, source.line_time).boots
    times = {r.milestone.id: r.elapsed_s for r in phase_rows(boot)}
    autoboot, loaded = times["autoboot"], times["kernel_loaded"]
    assert autoboot is not None and loaded is not None
    assert loaded - autoboot < 1.0                    # no 2 s countdown any more


async def test_reboot_key_runs_the_power_command_when_told_to(bench: Bench) -> None:
    marker = bench.folder / "power cycled"
    bench.link.reboot = RebootStrategy("power", f"touch '{marker}'")
    await bench.pilot.press("ctrl+t", "R")
    ended = await job_done(bench)
    assert "power reboot" in ended.text and marker.exists()
    assert bench.board.shell_commands == []           # nothing typed at the board
    notes = [m.notification.message for m in bench.seen if isinstance(m, Notify)]
    assert any("power-cycle command: ['touch'," in note for note in notes)


def test_an_ab_run_stopped_by_its_evidence_says_why() -> None:
    why = "quiet run 1: expected quiet in force, the boot shows it not in force: ..."
    assert failure_text("A/B quiet", NotInForce(why)) == \
        f"A/B quiet stopped, a setting was not as its variant says: {why}"


def test_the_console_command_takes_the_reboot_strategy(tmp_path: Path) -> None:
    args = build_console_parser().parse_args(["/dev/ttyUSB7", "--reboot", "power",
                                              "--sessions", str(tmp_path)])
    assert run_live(args) == BAD_INPUT                # power needs --power-cmd


async def test_nothing_is_sent_when_the_environment_gives_other_commands(bench: Bench) -> None:
    pilot, board = bench.pilot, bench.board
    # The log showed the factory command line; the saved environment (read after the reboot)
    # has more in bootargs, so quiet would be added to another line than the one shown.
    board.saved["bootargs"] += " loglevel=3"
    await mark(bench, "q")
    await pilot.press("P", "enter")
    await wait_until(pilot, bench.ended, "the job")
    (ended,) = bench.ended()
    assert ended.outcome == "failed" and "nothing was sent" in ended.text
    assert "press P again" in ended.text
    assert board.commands == ["printenv"]             # no setenv, no boot
    panel = bench.screen.query_one(SettingsPanel)
    assert panel.pending == {"quiet": True}
    assert "rootwait loglevel=3 quiet'" in "\n".join(panel.preview())
    bench.seen.clear()
    await pilot.press("P")                            # the board waits at its prompt
    dialog = bench.app.screen
    assert isinstance(dialog, ApplyDialog) and dialog.commands is not None
    assert dialog.commands[0].endswith("rootwait loglevel=3 quiet'")
    await pilot.press("enter")
    await job_done(bench)
    assert board.commands[1:] == ["printenv", *dialog.commands, "boot"]


async def test_apply_refuses_a_setting_that_would_not_be_in_force(bench: Bench) -> None:
    # bootdelay acts in the countdown, before the prompt: without saving it and resetting,
    # the boot typed at the prompt would be measured under its name with nothing changed.
    pilot, board = bench.pilot, bench.board
    await mark(bench, "d")
    await pilot.press("P")
    dialog = bench.app.screen
    assert isinstance(dialog, ApplyDialog) and dialog.persist   # offered saved, as it needs
    dialog.query_one("#apply-persist", Checkbox).value = False
    await wait_until(pilot, lambda: not dialog.persist, "the save choice")
    await pilot.press("enter")
    await wait_until(pilot, bench.ended, "the job")
    (ended,) = bench.ended()
    assert ended.outcome == "failed" and "nothing was measured" in ended.text
    assert "No autoboot delay acts before the U-Boot prompt" in ended.text
    assert board.commands == ["printenv"]              # nothing sent, no boot started


async def test_ab_refuses_a_setting_not_applicable_before_any_boot(bench: Bench) -> None:
    # lpj= on a kernel that skips its calibration by itself would save nothing: refused with
    # the reason, no A/B boot made, the run said to need --force.
    pilot, board = bench.pilot, bench.board
    await mark(bench, "l")
    await pilot.press("T")
    assert isinstance(bench.app.screen, ABDialog)
    await pilot.press("shift+tab", "space")           # a fixed run
    await pilot.press("tab", "backspace", "2", "enter")
    await wait_until(pilot, bench.ended, "the job", 60)
    (ended,) = bench.ended()
    assert ended.outcome == "failed" and "nothing was measured" in ended.text
    assert "not applicable" in ended.text and "--force lpj" in ended.text
    assert ("boot" not in board.commands and bench.sessions("boot") == []) or \
        all(not s.meta.get("ab") for s in bench.sessions("boot"))
