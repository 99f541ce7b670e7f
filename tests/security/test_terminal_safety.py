"""Device output is untrusted: no escape sequence or C1 control from a board (or a session file)
reaches the host terminal, through the app, `bootlab replay`, `bootlab record` or an export."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import BOOTLAB
from support.pty_pair import Pty
from support.terminal import ATTACKS, PAYLOAD, Terminal, findings
from textual.geometry import Region
from textual.pilot import Pilot

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import SessionWriter
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import live_app, replay_app
from bootlab.ui.main.screen import MainScreen

SHOWN_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SGR = re.compile(rb"\x1b\[[0-9;:]*m")
BOOT = (b"U-Boot 2023.01 (Jan 01 2023)\r\n" + PAYLOAD
        + b"Starting kernel ..." + ATTACKS["OSC 52 clipboard write"] + b"\x9b2J\r\n"
        + b"[    0.000000] Booting Linux " + "\u009d0;PWNED\u009c".encode() + b"\r\n"
        + b"buildroot login: ")


def evil_session(folder: Path, name: str = "evil", **meta: object) -> Path:
    """A session whose received bytes (and header, where given) carry every attack."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20260101-000000-{name}-01.jsonl"
    writer = SessionWriter(path, {"label": "evil", "profile": "linux", **meta}, start_ns=0)
    for index, piece in enumerate(BOOT.split(b"\r\n")):
        writer.rx(piece + b"\r\n", index * 1_000_000)
    writer.close(10**9)
    return path


def test_the_scanner_sees_every_attack() -> None:
    for name, attack in ATTACKS.items():
        assert findings(b"safe " + attack + b" text"), name
    assert findings(b"plain text \x1b[1;31mred\x1b[0m \x1b[2;5H") == []


# -- the app ---------------------------------------------------------------------------------


def test_the_live_app_in_a_real_terminal_writes_none_of_it(pty_pair: Pty,
                                                            tmp_path: Path) -> None:
    term = Terminal([*BOOTLAB, pty_pair.name, "--sessions", str(tmp_path)])
    try:
        term.wait_for(b"connected")
        pty_pair.write(BOOT + b"\r\nSAFE-END\r\n")
        output = term.wait_for(b"SAFE-END")
        time.sleep(0.5)                       # let the app draw whatever else it would
        output = term.snapshot()
        assert b"before" in output and b"after" in output
        assert findings(output) == []
    finally:
        term.type(b"\x14q")                   # Ctrl-T q: quit (restoring the terminal)
        assert term.close() == 0


def test_the_replay_app_in_a_real_terminal_writes_none_of_it(tmp_path: Path) -> None:
    path = evil_session(tmp_path, "e\x1b]0;PWNED\x07vil\x9b2J", board="b\x1b]2;PWNED-B\x07",
                        label="l\x9d0;PWNED-L\x9c")
    with path.open("a") as handle:                 # a damaged record: a notice names the file
        handle.write('{"t": 5, "rx": \n')
    term = Terminal([sys.executable, "-c", "import sys; from pathlib import Path; from "
                     "bootlab.ui.launch import replay_app; replay_app(Path(sys.argv[1]), "
                     "speed=0).run()", str(path)])
    try:
        term.wait_for(b"unreadable")
        term.wait_for(b"login:")
        time.sleep(0.5)
        assert findings(term.snapshot()) == []
    finally:
        term.type(b"\x11")                         # Ctrl-Q
        assert term.close() == 0


def _screen_text(app: BootlabApp) -> str:
    """Every visible widget's rendered segments, joined."""
    texts = []
    for widget in app.screen.walk_children(with_self=True):
        if widget.display and widget.size.area:
            region = Region(0, 0, widget.size.width, widget.size.height)
            texts += [s.text for strip in widget.render_lines(region) for s in strip]
    return "".join(texts)


async def _until(pilot: Pilot[None], condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 45
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def test_the_live_console_renders_no_control(pty_pair: Pty, tmp_path: Path) -> None:
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path)
    async with app.run_test(size=(120, 60)) as pilot:
        screen = app.screen_stack[0]
        assert isinstance(screen, MainScreen)
        await _until(pilot, lambda: screen.status.state == "connected", "the port")
        pty_pair.write(BOOT)
        await _until(pilot, lambda: screen.console.partial is not None, "the login prompt")
        screen.console.flush()
        await pilot.pause()
        text = _screen_text(app)
        assert "before" in text and "login:" in text
        assert SHOWN_CONTROL.search(text) is None, SHOWN_CONTROL.findall(text)
    assert link.wait_closed()


async def test_a_replayed_session_renders_no_control(tmp_path: Path) -> None:
    label = "lab\x1b]2;PWNED\x07el\u009b2J"
    path = evil_session(tmp_path, "e\x1b]0;PWNED\x07vil", board="bo\x1b[2Jard\x9d0;x\x9c",
                        label=label)
    with path.open("a") as handle:                 # a damaged record: a notice is shown
        handle.write('{"t": 5, "rx": \n')
    app = replay_app(path, speed=0)
    async with app.run_test(size=(120, 60)) as pilot:
        screen = app.screen_stack[0]
        assert isinstance(screen, MainScreen)
        await _until(pilot, lambda: screen.status.state.startswith("ended"),
                     "the end of the replay")
        await pilot.pause()
        text = _screen_text(app)
        assert "before" in text and "label label" in text     # shown, cleaned
        assert SHOWN_CONTROL.search(text) is None, SHOWN_CONTROL.findall(text)


# -- the command line ------------------------------------------------------------------------


def test_replay_to_a_pipe_writes_no_escape(tmp_path: Path) -> None:
    path = evil_session(tmp_path)
    done = subprocess.run([*BOOTLAB, "replay", str(path), "--speed", "0"], capture_output=True,
                          timeout=60)
    assert done.returncode == 0 and b"before" in done.stdout
    assert b"\x1b" not in done.stdout and findings(done.stdout + done.stderr) == []
    assert SHOWN_CONTROL.search(done.stdout.decode().replace("\n", "")) is None


def test_replay_to_a_terminal_keeps_only_colours(tmp_path: Path) -> None:
    path = evil_session(tmp_path)
    term = Terminal([*BOOTLAB, "replay", str(path), "--speed", "0"])
    assert term.close() == 0
    output = term.snapshot()
    assert b"before" in output and findings(output) == []
    shown = SGR.sub(b"", output).decode().replace("\r\n", "")
    assert SHOWN_CONTROL.search(shown) is None, SHOWN_CONTROL.findall(shown)


def test_record_prints_device_lines_cleaned(pty_pair: Pty, tmp_path: Path) -> None:
    process = subprocess.Popen([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path),
                                "--pattern", "SAFE-END", "--timeout", "30"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 45
    while not list(tmp_path.glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    pty_pair.write(BOOT + b"\r\nSAFE-END\r\n")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert b"before" in out and b"\x1b" not in out + err
    assert findings(out + err) == []
    assert SHOWN_CONTROL.search((out + err).decode().replace("\n", "")) is None
    (session,) = tmp_path.glob("*.jsonl")
    assert ATTACKS["OSC 52 clipboard write"].decode("latin-1") in \
        "".join(json.loads(line).get("rx", "") for line in session.read_text().splitlines())


@pytest.mark.parametrize("form", ["asciicast", "jsonl", "markdown", "csv"])
def test_exports_carry_no_escape_but_sgr(tmp_path: Path, form: str) -> None:
    path = evil_session(tmp_path, board="b\x1b]0;PWNED\x07")
    done = subprocess.run([*BOOTLAB, "export", str(path), "--format", form],
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert findings(done.stdout) == [] and b"\x1b" not in done.stdout   # JSON escapes it
    if form == "asciicast":
        header, *events = done.stdout.decode().splitlines()
        shown = "".join(json.loads(event)[2] for event in events) + json.loads(header)["title"]
        assert "before" in shown
        kept = re.sub(r"\x1b\[[0-9;:]*m", "", shown).replace("\r\n", "")
        assert SHOWN_CONTROL.search(kept) is None, SHOWN_CONTROL.findall(kept)
    elif form == "jsonl":
        rows = [json.loads(line) for line in done.stdout.decode().splitlines()]
        assert b"".join(base64.b64decode(row["b64"]) + b"\n" for row in rows).startswith(
            BOOT.split(b"\r\nStarting")[0])                                 # exact bytes kept
        shown = "".join(row["text"] for row in rows)
        assert "before" in shown and SHOWN_CONTROL.search(shown) is None
    else:
        assert b"starting_kernel" in done.stdout
        assert SHOWN_CONTROL.search(done.stdout.decode().replace("\n", "")) is None


def test_json_output_escapes_every_control(tmp_path: Path) -> None:
    path = evil_session(tmp_path, label="l\x1b]52;c;eA==\x07")
    done = subprocess.run([*BOOTLAB, "analyze", str(path), "--json"], capture_output=True,
                          timeout=60)
    assert done.returncode == 0
    assert findings(done.stdout) == [] and b"\x1b" not in done.stdout
    assert all(0x20 <= byte < 0x7F or byte == 0x0A for byte in done.stdout)
    assert json.loads(done.stdout)["source"]["label"] == "l\x1b]52;c;eA==\x07"


def test_listing_and_comparing_sessions_with_hostile_headers(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    evil_session(folder, label="l\x1b]52;c;UFdORUQ=\x07", board="\x9b2J\u009d0;PWNED\u009c")
    for argv in (["sessions", "--sessions", str(folder)],
                 ["compare", *map(str, folder.glob("*.jsonl"))]):
        done = subprocess.run([*BOOTLAB, *argv], capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert findings(done.stdout + done.stderr) == [] and b"\x1b" not in done.stdout
