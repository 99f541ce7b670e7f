"""Passwords typed at a prompt never reach a session file, an export or a report; the power
command runs without a shell, shown before its first run."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.password_board import PasswordBoard
from support.paths import BOOTLAB
from support.pty_pair import Pty
from textual.pilot import Pilot

from bootlab.cli import main
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.redaction import SecretInput
from bootlab.core.capture.session import load_session
from bootlab.ui.launch import live_app
from bootlab.ui.main.screen import MainScreen

HERE = Path(__file__).resolve().parent
PASSWORD = "hunter2-S3cret"
SHELLISH = ["a;b", "$(touch PWNED)", "`touch PWNED2`", ">", "out", "|", "cat", "*", "&&",
            "touch", "PWNED3"]


def everything_written(folder: Path) -> bytes:
    """Every session file in `folder`, and every export and report made from each."""
    sessions = sorted(folder.glob("*.jsonl"))
    assert sessions
    out = b"".join(path.read_bytes() for path in sessions)
    for path in sessions:
        for command, forms in (("export", ("asciicast", "jsonl", "csv", "markdown")),
                               ("report", ("markdown", "json", "html", "csv"))):
            for form in forms:
                written = io.StringIO()
                with contextlib.redirect_stdout(written), \
                        contextlib.redirect_stderr(io.StringIO()):
                    assert main([command, str(path), "--format", form]) == 0
                out += written.getvalue().encode()
    return out


def bootlab(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("stars", [False, True], ids=["silent", "echoing-stars"])
def test_boot_logs_in_and_keeps_the_password_out(pty_pair: Pty, tmp_path: Path,
                                                 stars: bool) -> None:
    trigger = tmp_path / "powered"
    board = PasswordBoard(pty_pair, trigger, PASSWORD.encode(), echo_stars=stars)
    power = " ".join([sys.executable, str(HERE / "power.py"), str(trigger),
                      *(f"'{arg}'" for arg in SHELLISH)])
    sessions = tmp_path / "sessions"
    try:
        done = bootlab("boot", pty_pair.name, "--reboot", "power", "--power-cmd", power,
                       "--login", "--password", PASSWORD, "--pace-ms", "0", "--timeout", "30",
                       "--sessions", str(sessions), cwd=tmp_path)
    finally:
        board.stop()
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert board.logged_in                           # the password did reach the board
    # The power command: shown before it ran, run without a shell (every word as written).
    shown = re.search(r"power-cycle command: (\[.*\])", err)
    assert shown is not None and ast.literal_eval(shown.group(1))[3:] == SHELLISH
    assert json.loads(trigger.read_text()) == SHELLISH
    assert not any((tmp_path / name).exists() for name in ("PWNED", "PWNED2", "PWNED3", "out"))
    # The password: redacted in the session, absent from everything made from it.
    written = everything_written(sessions)
    assert PASSWORD.encode() not in written and PASSWORD[3:].encode() not in written
    redacted = [n for path in sessions.glob("*.jsonl") for _, n in load_session(path).sent
                if isinstance(n, int)]
    assert sum(redacted) == len(PASSWORD) + 1       # the password and its Enter


def test_a_power_on_command_is_stamped_as_the_boots_time_zero(pty_pair: Pty,
                                                             tmp_path: Path) -> None:
    """`record --power-off-cmd ... --power-on-cmd ...`: the on command's start is stamped,
    so the board's silence before its first byte is a measured phase, the command's run time
    said with it (the switch came within it), and the board's first bytes, sent before the
    command returned, belong to the boot. A `--power-cmd` cycle is not stamped."""
    trigger = tmp_path / "powered"
    board = PasswordBoard(pty_pair, trigger, PASSWORD.encode(), autoboot_s=0.3)
    power_on = " ".join([sys.executable, str(HERE / "power.py"), str(trigger)])
    power_off = " ".join([sys.executable, "-c", "'print(\"off\")'"])
    sessions = tmp_path / "sessions"
    try:
        done = bootlab("record", pty_pair.name, "--power-on-cmd", power_on, "--power-off-cmd",
                       power_off, "--power-off", "0.2", "--until", "login", "--timeout", "30",
                       "--sessions", str(sessions), cwd=tmp_path)
    finally:
        board.stop()
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "power commands: off [" in err and "on [" in err
    path = next(iter(sessions.glob("*.jsonl")))
    events = [e for e in load_session(path).events if e.get("event") == "power"]
    assert [e["state"] for e in events] == ["off", "on"]
    assert events[1]["t"] - events[0]["t"] >= 0.2e9       # off for --power-off seconds
    ran = events[1]["ran_ms"]
    assert isinstance(ran, float) and ran > 0
    shown = bootlab("analyze", str(path)).stdout.decode()
    zero = re.search(r"zero \(bootlab\) +- +0\.000 .*power-on via `", shown)
    assert zero is not None, shown
    analyzed = json.loads(bootlab("analyze", str(path), "--json").stdout)
    boot = analyzed["boots"][0]
    assert boot["zero"]["what"].endswith(f", which ran {ran:g} ms from here: the power came "
                                         "on within them")
    first = next(m for m in analyzed["milestones"] if m["id"] != "zero")
    assert first["id"] == "bootloader" and first["elapsed_s"] > 0   # the banner, after silence


def test_a_bad_secret_prompt_is_refused(pty_pair: Pty, tmp_path: Path) -> None:
    done = bootlab("boot", pty_pair.name, "--secret-prompt", "(unclosed", "--sessions",
                   str(tmp_path))
    assert done.returncode == 2 and b"--secret-prompt" in done.stderr


async def _wait(pilot: Pilot[None], condition: object, what: str) -> None:
    import time

    deadline = time.monotonic() + 45
    while not callable(condition) or not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


@pytest.mark.parametrize(("prompt", "pattern"), [
    (b"Password: ", None),
    (b"Enter PIN for token: ", re.compile(r"PIN[^:]*: $")),
], ids=["default", "--secret-prompt"])
async def test_the_live_console_redacts_what_is_typed_at_the_prompt(
        pty_pair: Pty, tmp_path: Path, prompt: bytes, pattern: re.Pattern[str] | None) -> None:
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path,
                         secret_prompt=pattern)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen_stack[0]
        assert isinstance(screen, MainScreen)
        console = screen.console
        await _wait(pilot, lambda: screen.status.state == "connected", "the port")
        pty_pair.write(b"board login: ")
        await _wait(pilot, lambda: console.partial is not None, "the login prompt")
        await pilot.press(*"root", "enter")
        pty_pair.write(b"root\r\n" + prompt)
        await _wait(pilot, lambda: console.partial is not None
                    and console.partial.raw == prompt, "the password prompt")
        for index, key in enumerate(PASSWORD):
            await pilot.press(key)
            pty_pair.write(b"*")                     # the board echoes a star per key
            await _wait(pilot, lambda i=index: console.partial is not None
                        and console.partial.raw.endswith(b"*" * (i + 1)), "the echo")
        await pilot.press("enter")
        pty_pair.write(b"\r\n# ")
        await _wait(pilot, lambda: console.partial is not None
                    and console.partial.raw == b"# ", "the shell")
        await pilot.press("l", "s", "enter")
        await pilot.press("ctrl+t", "q")
    assert link.wait_closed()
    (path,) = tmp_path.glob("*.jsonl")
    sent = load_session(path).sent
    assert b"".join(s for _, s in sent if isinstance(s, bytes)) == b"root\rls\r"
    assert sum(s for _, s in sent if isinstance(s, int)) == len(PASSWORD) + 1
    assert PASSWORD[:4].encode() not in everything_written(tmp_path)


@pytest.mark.parametrize(("keys", "secret"), [
    ([b"h", b"*", b"\r", b"l"], [True, True, True, False]),     # Enter ends it
    ([b"h", b"\x03", b"x"], [True, True, False]),               # so does Ctrl-C
    ([b"pw\n", b"ls\n"], [True, False]),                        # typed in one piece
])
def test_secret_input_lasts_from_the_prompt_to_the_end_of_the_line(
        keys: list[bytes], secret: list[bool]) -> None:
    tracker = SecretInput()
    shown = ["Password: "] + ["Password: ***"] * (len(keys) - 1)
    assert [tracker.typed(line, key) for line, key in zip(shown, keys, strict=True)] == secret
    assert SecretInput().typed("login: ", b"root\r") is False
    assert SecretInput(re.compile("PIN:")).typed("Enter PIN: ", b"1") is True
