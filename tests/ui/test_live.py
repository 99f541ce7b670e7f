"""The app on a live port: a real pseudo-terminal carries the board's bytes both ways."""

from __future__ import annotations

import json
from pathlib import Path

from support.paths import example_sessions
from support.pilot import main_screen, settings_rows, visible_text, wait_until
from support.pty_pair import Pty
from support.qemu_env import QEMU_ENV
from textual.command import CommandPalette
from textual.message import Message
from textual.notifications import Notify

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.session.events import EnvRead
from bootlab.ui.launch import live_app
from bootlab.ui.messages import poster
from bootlab.ui.widgets.phase_panel import PhasePanel
from bootlab.ui.widgets.settings_panel import SettingsPanel

BOOT = load_session(example_sessions("default")[0]).data
SENT = b"pri\r\x03\x7f\x1b[A\x14\t\x10/q\x1b[F"
"""What the keys typed into the console send: Ctrl-C, Ctrl-P, Tab, /, q and End included."""


async def test_live_port_shows_lines_sends_keys_and_records(pty_pair: Pty,
                                                            tmp_path: Path) -> None:
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path,
                         label="bench", board="qemu")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "connected", "the port to open")
        pty_pair.write(BOOT[:6000])
        console = screen.console
        await wait_until(pilot, lambda: console.line_count > 50, "lines from the pty")
        await wait_until(pilot, lambda: len(screen.boot_state.rows) >= 5, "milestones")
        assert screen.status.recording is not None and screen.status.recording.endswith(".jsonl")
        assert console.has_focus and "keys go to the board" in str(console.border_subtitle)
        await pilot.press("p", "r", "i", "enter", "ctrl+c", "backspace", "up", "ctrl+t",
                          "ctrl+t", "tab", "ctrl+p", "slash", "q", "end")
        assert pty_pair.read(19) == SENT
        await pilot.press("ctrl+t", "t")
        assert console.time_mode == "delta"
        await pilot.press("ctrl+t", "p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press("escape")
        await pilot.press("ctrl+t", "tab", "q")
        assert isinstance(app.focused, PhasePanel)
        assert screen.query_one(SettingsPanel).pending == {"quiet": True}
        await pilot.press("shift+tab")
        assert console.has_focus
        pty_pair.write(b"\nPassword: ")
        await wait_until(pilot, lambda: console.partial is not None
                         and console.partial.raw == b"Password: ", "the password prompt")
        await pilot.press(*"hunter2", "enter")
        assert pty_pair.read(8) == b"hunter2\r"
        pty_pair.write(b"\n=> ")
        await wait_until(pilot, lambda: console.partial is not None
                         and console.partial.raw == b"=> ", "the prompt")
        await pilot.pause()
        assert any(row.rstrip().endswith(" =>") for row in visible_text(console))
        await pilot.press("ctrl+t", "q")
    assert link.wait_closed()
    [path] = tmp_path.glob("*.jsonl")
    session = load_session(path)
    assert session.data == BOOT[:6000] + b"\nPassword: \n=> "
    assert session.meta["label"] == "bench" and session.meta["board"] == "qemu"
    assert b"".join(data for _, data in session.sent if isinstance(data, bytes)) == SENT
    assert [data for _, data in session.sent if isinstance(data, int)] == [1] * 8
    assert b"hunter2" not in path.read_bytes()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[-1]["event"] == "end"


async def test_stamped_kernel_shows_printk_time_on_whatever_the_environment_says(
        pty_pair: Pty, tmp_path: Path) -> None:
    # The environment (as a board job's printenv reads it) has no printk.time in bootargs; the
    # kernel stamps its lines by its own default (CONFIG_PRINTK_TIME): the log wins.
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "connected", "the port to open")
        poster(screen)(EnvRead(dict(QEMU_ENV)))
        panel = screen.query_one(SettingsPanel)
        await wait_until(pilot, lambda: panel.facts.env == QEMU_ENV, "the environment")
        assert "printk_time" not in panel.evidence  # bootargs alone does not tell
        pty_pair.write(BOOT)
        await wait_until(pilot, lambda: "printk_time" in panel.evidence
                         and panel.evidence["printk_time"].kernel_default is not None,
                         "the stamps and the kernel command line")
        stamps = panel.evidence["printk_time"]
        assert (stamps.state, stamps.how, stamps.line) == (True, "log", 78)
        assert stamps.kernel_default == "CONFIG_PRINTK_TIME" and stamps.against == ()
        await pilot.pause()
        [row] = [row for row in settings_rows(panel) if row.startswith("t ")]
        assert row.startswith("t on ") and row.endswith("kernel default · log 78")
        # The countdown and the environment agree on bootdelay 2.
        bootdelay = panel.evidence["bootdelay"]
        assert (bootdelay.value, bootdelay.how, bootdelay.against) == ("2", "log", ())
        await pilot.press("ctrl+t", "q")
    assert link.wait_closed()


async def test_missing_port_is_a_notification_not_a_crash(tmp_path: Path) -> None:
    seen: list[Message] = []
    app, link = live_app("/dev/bootlab-no-such-port", 115200, load_profile("linux"), tmp_path)
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "failed", "the failure")
        await pilot.press("a")  # typing with no port: a warning, nothing else
        await pilot.pause()
        assert app.is_running
    assert link.wait_closed() and link.failure is not None and "no such port" in link.failure
    texts = [m.notification.message for m in seen if isinstance(m, Notify)]
    assert any("no such port" in text and "bootlab ports" in text for text in texts)
    assert any("not connected" in text for text in texts)
    assert list(tmp_path.glob("*.jsonl")) == []


async def test_unplugged_port_shows_reconnecting(pty_pair: Pty, tmp_path: Path) -> None:
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "connected", "the port to open")
        pty_pair.write(b"U-Boot 2023.01\r\n")
        await wait_until(pilot, lambda: screen.console.line_count == 1, "a line")
        pty_pair.close()
        await wait_until(pilot, lambda: screen.status.state == "reconnecting", "the gap")
        # the boot being received has lost bytes: the phase pane says it has no total
        await wait_until(pilot, lambda: screen.boot_state.marks(None).note.startswith(
            "incomplete: port lost at "), "the boot marked incomplete")
    assert link.wait_closed()
    session = load_session(next(tmp_path.glob("*.jsonl")))
    assert any(event["event"] == "gap" for event in session.events)
    assert session.meta["gaps"][0]["why"]


async def test_escape_sequences_from_the_port_never_reach_the_terminal(
        pty_pair: Pty, tmp_path: Path) -> None:
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path)
    async with app.run_test(size=(120, 24)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "connected", "the port to open")
        pty_pair.write(b"\x1b]52;c;aGVsbG8=\x07\x1b]2;pwned\x07\x1b[2J\x1b[Hsafe \x1b[32mgreen"
                       b"\x1b[0m\r\n\x1b]52;c;eA==\x07=> ")
        console = screen.console
        await wait_until(pilot, lambda: console.line_count == 1 and console.partial is not None,
                         "the line and the prompt")
        console.flush()
        await pilot.pause()
        segments = [s for y in range(console.size.height) for s in console.render_line(y)]
        text = "".join(s.text for s in segments)
        assert "safe green" in text and "=> " in text
        assert "\x1b" not in text and "\x07" not in text and "pwned" not in text
        assert all(ord(ch) >= 0x20 for ch in text)
    assert link.wait_closed()
