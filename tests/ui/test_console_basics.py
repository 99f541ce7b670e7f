"""A serial terminal's basics in the live app, on a real pty: hex view, local echo (a password
as dots), the plain-text log with the time column as shown, BREAK."""

from __future__ import annotations

from pathlib import Path

from support.pilot import main_screen, row_text, wait_until
from support.pty_pair import Pty
from textual.message import Message
from textual.notifications import Notify

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.capture.textlog import TextLog
from bootlab.ui.launch import live_app
from bootlab.ui.widgets.console import ConsoleView

PROFILE = load_profile("linux")


def said(seen: list[Message]) -> list[str]:
    return [m.notification.message for m in seen if isinstance(m, Notify)]


async def test_hex_view_shows_the_bytes_of_each_line(pty_pair: Pty, tmp_path: Path) -> None:
    app, link = live_app(pty_pair.name, 115200, PROFILE, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = main_screen(app)
        console = screen.console
        await wait_until(pilot, lambda: screen.status.recording is not None, "the port")
        pty_pair.write(b"ok\x00\x1b[2J\r\nnext\r\n")
        await wait_until(pilot, lambda: console.line_count == 2, "two lines")
        assert row_text(console, 0).endswith(" ok\u2400")   # the text: NUL shown, escape gone
        await pilot.press("ctrl+t", "h")                    # live: Ctrl-T h, not h
        assert console.hex_view and "hex" in str(console.border_title)
        assert row_text(console, 0).rstrip().endswith("6f 6b 00 1b 5b 32 4a 0d 0a")
        await pilot.press("ctrl+t", "h")
        assert not console.hex_view and row_text(console, 1).endswith(" next")
    assert link.wait_closed()


async def test_local_echo_shows_typed_keys_and_a_password_as_dots(pty_pair: Pty,
                                                                  tmp_path: Path) -> None:
    app, link = live_app(pty_pair.name, 115200, PROFILE, tmp_path)
    link.local_echo = True  # --echo
    async with app.run_test(size=(100, 30)) as pilot:
        screen = main_screen(app)
        console = screen.console
        await wait_until(pilot, lambda: screen.status.recording is not None, "the port")
        assert console.local_echo and "echo" in str(console.border_title)
        pty_pair.write(b"=> ")
        await wait_until(pilot, lambda: console.partial is not None, "the prompt")
        await pilot.press("l", "x", "backspace", "s", "enter")
        assert pty_pair.read(5) == b"lx\x7fs\r"  # the board gets every key as typed
        await wait_until(pilot, lambda: row_text(console, 0).endswith("=> ls⏎"), "the echo")
        pty_pair.write(b"\r\nbin etc\r\nPassword: ")       # the board answers; asks a secret
        await wait_until(pilot, lambda: console.line_count == 2, "the answer")
        assert row_text(console, 0).endswith("=> ls⏎")      # kept with its line
        await pilot.press("h", "u", "n", "t", "e", "r", "2")
        await wait_until(pilot, lambda: row_text(console, 2).endswith("Password: •••••••"),
                         "the password as dots")
        await pilot.press("ctrl+t", "l")
        assert not console.local_echo
        await pilot.press("z")
        await pilot.pause()
        assert row_text(console, 2).endswith("Password: •••••••")
    assert link.wait_closed()
    [path] = tmp_path.glob("*.jsonl")
    sent = load_session(path).sent
    clear = b"".join(data for _, data in sent if isinstance(data, bytes))
    # stored as lengths only, a key at a time: hunter2 and the z (still at the prompt)
    assert b"hunter" not in clear and sum(d for _, d in sent if isinstance(d, int)) == 8


async def test_the_text_log_has_the_time_column_as_shown(pty_pair: Pty, tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    app, link = live_app(pty_pair.name, 115200, PROFILE, tmp_path / "sessions")
    link.text_log = TextLog(log)  # --log
    async with app.run_test(size=(100, 30)) as pilot:
        screen = main_screen(app)
        console = screen.console
        await wait_until(pilot, lambda: screen.status.recording is not None, "the port")
        pty_pair.write(b"[    0.000000] Booting Linux\r\n")
        await wait_until(pilot, lambda: log.exists() and log.read_text().count("\n") == 1,
                         "the first line logged")
        await pilot.press("ctrl+t", "t", "ctrl+t", "t", "ctrl+t", "t")  # printk time
        assert console.time_mode == "kernel"
        pty_pair.write(b"[    1.500000] Run /init\r\n")
        await wait_until(pilot, lambda: log.read_text().count("\n") == 2, "the second")
        await pilot.press("ctrl+t", "t")                                # off
        pty_pair.write(b"\x1b[1mlogin: \x1b[0m")
        await wait_until(pilot, lambda: console.partial is not None, "the prompt")
    assert link.wait_closed()
    first, second, last = log.read_text().splitlines()
    assert first.endswith(" [    0.000000] Booting Linux") and float(first.split()[0]) >= 0
    assert second == "    1.500000 [    1.500000] Run /init"
    assert last == "login: "  # the line still arriving at the end, no column when off


async def test_ctrl_t_b_sends_a_break_and_records_it(pty_pair: Pty, tmp_path: Path) -> None:
    seen: list[Message] = []
    app, link = live_app(pty_pair.name, 115200, PROFILE, tmp_path)
    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.recording is not None, "the port")
        assert isinstance(app.focused, ConsoleView)
        await pilot.press("ctrl+t", "b")
        await wait_until(pilot, lambda: "BREAK sent" in said(seen), "the BREAK")
        pty_pair.write(b"after the break\r\n")  # a read: the port's thread writes the event
        await wait_until(pilot, lambda: screen.console.line_count == 1, "a line after")
    assert link.wait_closed()
    [path] = tmp_path.glob("*.jsonl")
    assert [e["event"] for e in load_session(path).events].count("break") == 1
