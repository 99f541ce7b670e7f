"""Network consoles through ser2net: the stamp-cost note, and `bootlab record` on a real ser2net
(Debian's, exporting a pty as a labgrid exporter does) with a fake board writing lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.paths import BOOTLAB, example_sessions
from support.pty_pair import Pty
from support.ser2net import Ser2net, ser2net_binary

from bootlab.core.capture.session import load_session
from bootlab.transports import netport
from bootlab.transports.netport import stamp_cost_note

BOOT = load_session(example_sessions("default")[0]).data
BINARY = bytes(range(256)) + b"\r\n"
"""Every byte value: RFC 2217's telnet must escape 0xFF (IAC) and keep CR NUL apart."""
LABELS = {"raw": "raw TCP", "rfc2217": "RFC 2217"}


def test_no_note_for_a_local_port() -> None:
    for url in ("/dev/ttyUSB0", "/dev/pts/3", "exec:qemu-system-arm -nographic", "loop://"):
        assert stamp_cost_note(url, via_ser2net=True) is None


def test_note_quotes_the_measured_figure_of_its_protocol() -> None:
    raw = stamp_cost_note("socket://farm:4001", via_ser2net=True)
    rfc = stamp_cost_note("RFC2217://farm:4002?ign_set_control", via_ser2net=True)
    assert raw is not None and rfc is not None
    for note, scheme, label in ((raw, "socket", "raw TCP"), (rfc, "rfc2217", "RFC 2217")):
        p50, p99 = netport.SER2NET_MS[scheme]
        assert f"through ser2net ({label}) are late by up to ~{p99:.0f} ms" in note
        assert f"measured p50 {p50:.1f} ms, p99 {p99:.1f} ms in bench/bench_ser2net.py" in note
        assert "chardelay" in note and not note.split(": ", 1)[1].startswith("if ")
    assert raw.startswith("socket://farm:4001: ")


def test_note_says_if_when_ser2net_is_not_known_to_serve_the_port() -> None:
    note = stamp_cost_note("socket://127.0.0.1:5555", via_ser2net=False)
    assert note is not None
    assert note.startswith("socket://127.0.0.1:5555: if ser2net serves this port, stamps")


@pytest.fixture
def ser2net_installed() -> None:
    if ser2net_binary() is None:
        why = "ser2net is not installed (apt-get install ser2net; scripts/test installs it)"
        if os.environ.get("BOOTLAB_REQUIRE_BOARD"):
            pytest.fail(why)
        pytest.skip(why)


def _recorded(folder: Path) -> int:
    """Received bytes in the session files so far."""
    total = 0
    for path in folder.glob("*.jsonl"):
        for line in path.read_bytes().split(b"\n")[1:]:
            try:
                total += len(json.loads(line).get("rx", ""))
            except ValueError:
                continue  # the last record, still being written
    return total


def _opened_by(pid: int, device: str) -> bool:
    try:
        return any(os.path.realpath(f"/proc/{pid}/fd/{fd}") == device
                   for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@pytest.mark.usefixtures("ser2net_installed")
@pytest.mark.parametrize("protocol", ["raw", "rfc2217"])
def test_record_through_ser2net_keeps_every_byte_and_prints_the_note(
        protocol: str, pty_pair: Pty, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    with Ser2net(pty_pair.name, tmp_path / "ser2net", protocol) as server:
        proc = subprocess.Popen([*BOOTLAB, "record", server.url, "--sessions", str(sessions),
                                 "-q", "--no-reconnect"],
                                stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        first, second = proc.stderr.readline(), proc.stderr.readline()
        deadline = time.monotonic() + 10
        while not _opened_by(server.proc.pid, pty_pair.name):  # ser2net opens it on connect
            assert time.monotonic() < deadline, "ser2net never opened the pty"
            time.sleep(0.02)
        time.sleep(0.2)
        sent = BOOT + BINARY * 4
        for start in range(0, len(sent), 1500):  # a board: bursts, and pauses between them
            pty_pair.write(sent[start:start + 1500])
            time.sleep(0.01)
        while _recorded(sessions) < len(sent) and time.monotonic() < deadline + 20:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, first + second + err
    assert "recording" in first
    assert second == f"bootlab: note: {stamp_cost_note(server.url, via_ser2net=False)}\n"
    assert f"({LABELS[protocol]}) are late by up to" in second
    paths = list(sessions.glob("*.jsonl"))
    assert len(paths) == 1, paths
    assert load_session(paths[0]).data == sent
