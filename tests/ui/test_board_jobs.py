"""Driving the board from the app: reboot, apply the pending settings and boot, an A/B run.

Fast tests run the app on a real pty whose other end is a fake U-Boot and Linux
(tests/fake_board.py); one test drives the real QEMU board (`board` marker).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from board_bench import PROFILE, Bench, job_done, mark, open_bench, reached, rendered
from conftest import Pty, example_sessions
from textual.message import Message
from textual.notifications import Notify
from ui_helpers import main_screen, wait_until

from bootlab.cli import BAD_INPUT, build_console_parser
from bootlab.control.engine import RebootStrategy
from bootlab.core.analysis import analyze
from bootlab.core.phases import phase_rows
from bootlab.core.session import load_session
from bootlab.core.sources import open_source
from bootlab.ui.launch import live_app, replay_app, run_live
from bootlab.ui.messages import ABFinished, ABProgressed, JobEnded
from bootlab.ui.screens.ab_result import ABResultScreen
from bootlab.ui.screens.board_dialogs import ABDialog, ApplyDialog
from bootlab.ui.screens.main import MainScreen
from bootlab.ui.widgets.job_bar import JobBar
from bootlab.ui.widgets.settings_panel import SettingsPanel


@pytest.fixture
async def bench(pty_pair: Pty, tmp_path: Path) -> AsyncIterator[Bench]:
    async with open_bench(pty_pair, tmp_path) as opened:
        yield opened


async def test_apply_sends_what_it_showed_then_boots_and_measures(bench: Bench) -> None:
    screen, pilot, board = bench.screen, bench.pilot, bench.board
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
    assert reached(screen, "login") and screen.timeline.rows[0].milestone.id != "bootloader"
    assert screen.query_one(SettingsPanel).pending == {}
    numbers = [line.number for line in screen.console.lines]
    assert numbers == sorted(set(numbers))            # one stream across the new sessions
    assert not bar.has_class("-running")


async def test_reboot_key_restarts_the_board_from_its_shell(bench: Bench) -> None:
    screen, pilot, board = bench.screen, bench.pilot, bench.board
    await pilot.press("ctrl+t", "R")
    ended = await job_done(bench)
    assert "reboot -f at the shell" in ended.text
    assert board.shell_commands == ["reboot -f"]
    await wait_until(pilot, lambda: board.boots == 2 and reached(screen, "login"),
                     "the board to boot again", 20)
    (boot,) = bench.sessions("boot")
    assert boot.data.startswith(b"reboot -f")         # measured from the command
    assert [m.id for m in analyze(boot.data, PROFILE).milestones][-1] == "login"


async def test_ab_run_of_the_pending_setting_shows_progress_and_result(bench: Bench) -> None:
    pilot = bench.pilot
    await mark(bench, "q")
    await pilot.press("T")
    assert isinstance(bench.app.screen, ABDialog)
    await pilot.press("backspace", "2", "enter")      # 2 boots per variant, not 5
    await wait_until(pilot, lambda: any(isinstance(m, ABFinished) for m in bench.seen),
                     "the A/B run", 120)
    await job_done(bench)
    steps = [m for m in bench.seen if isinstance(m, ABProgressed)]
    assert [(m.step.number, m.step.total) for m in steps] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert steps[0].last is None and all(m.last and "login at" in m.last for m in steps[1:])
    assert sorted(m.step.variant for m in steps) == ["base", "base", "quiet", "quiet"]
    result = bench.app.screen
    assert isinstance(result, ABResultScreen)
    shown = rendered(result.result)
    assert "quiet against base: 2+2 boots" in shown
    assert "login" in shown and "95% CI" in shown and "2+2 boots)" in shown
    state = json.loads((bench.folder / "ab-quiet-1.json").read_text())
    assert len(state["done"]) == 4
    tagged = [s for s in bench.sessions("boot") if s.meta.get("ab")]
    assert sorted(s.meta["ab"]["variant"] for s in tagged) == ["base", "base", "quiet", "quiet"]
    await pilot.press("escape")
    assert isinstance(bench.app.screen, MainScreen)


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
        (ended,) = [m for m in seen if isinstance(m, JobEnded)]
        assert ended.outcome == "done", ended.text
        rows = {row.milestone.id: row for row in screen.timeline.rows}
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
