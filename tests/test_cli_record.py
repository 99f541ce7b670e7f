"""`bootlab record` on real pseudo-terminals and TCP sockets."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from support.paths import BOOTLAB, example_sessions
from support.pty_pair import Pty

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.linetime import chunk_line_time
from bootlab.core.capture.session import load_session

BOOT = load_session(example_sessions("default")[0]).data


def start(port: str, folder: Path, *extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([*BOOTLAB, "record", port, "--sessions", str(folder), "-q", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert "recording" in first, first + proc.stderr.read()
    return proc


def only_session(folder: Path) -> Path:
    paths = list(folder.glob("*.jsonl"))
    assert len(paths) == 1, paths
    return paths[0]


def line_times(path: Path) -> dict[bytes, float]:
    session = load_session(path)
    offsets, times = session.chunk_offsets()
    when = chunk_line_time(offsets, times)
    out, offset = {}, 0
    for number, line in enumerate(session.data.split(b"\n"), start=1):
        t = when(number, offset)
        assert t is not None
        out[line] = t
        offset += len(line) + 1
    return out


def test_records_a_boot_from_a_pty_until_login(pty_pair: Pty, tmp_path: Path) -> None:
    proc = start(pty_pair.name, tmp_path, "--until", "login", "--label", "pty")
    sent_at = {}
    body, prompt = BOOT[:BOOT.rindex(b"\n") + 1], BOOT[BOOT.rindex(b"\n") + 1:]
    for i in range(0, len(body), 997):
        pty_pair.write(body[i:i + 997])
    time.sleep(0.2)
    sent_at["first"] = time.monotonic()
    pty_pair.write(b"Partial li")               # a line arriving in pieces ...
    time.sleep(0.4)
    pty_pair.write(b"ne ends here\r\n")          # ... is stamped with its first byte
    time.sleep(0.2)
    sent_at["second"] = time.monotonic()
    pty_pair.write(prompt[:3])
    time.sleep(0.3)
    pty_pair.write(prompt[3:])                   # "board login: " without newline: the goal
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "login" in err and "done" in err
    path = only_session(tmp_path)
    session = load_session(path)
    assert session.data == body + b"Partial line ends here\r\n" + prompt
    assert session.meta["label"] == "pty" and session.meta["port"] == pty_pair.name
    times = line_times(path)
    measured = times[prompt] - times[b"Partial line ends here\r"]
    expected = sent_at["second"] - sent_at["first"]
    assert abs(measured - expected) < 0.05, (measured, expected)
    analysis = analyze(session.data, load_profile("linux"), None)
    assert analysis.milestones[-1].id == "login"


def test_records_from_a_tcp_console_server_and_stops_on_sigterm(
        tcp_server: socket.socket, tmp_path: Path) -> None:
    port = tcp_server.getsockname()[1]
    proc = start(f"socket://127.0.0.1:{port}", tmp_path)
    conn, _ = tcp_server.accept()
    conn.sendall(BOOT[:5000])
    time.sleep(0.3)
    conn.sendall(BOOT[5000:])
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    conn.close()
    assert proc.returncode == 0, err
    session = load_session(only_session(tmp_path))
    assert session.data == BOOT
    assert session.events[-1]["event"] == "end" and "SIGTERM" in session.events[-1]["reason"]


def test_peer_closing_keeps_every_byte_and_says_why(tcp_server: socket.socket,
                                                    tmp_path: Path) -> None:
    port = tcp_server.getsockname()[1]
    proc = start(f"socket://127.0.0.1:{port}", tmp_path, "--until", "login", "--no-reconnect")
    conn, _ = tcp_server.accept()
    conn.sendall(BOOT[:5000])
    time.sleep(0.2)
    conn.close()
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 3
    assert "closed" in err or "stopped working" in err
    assert load_session(only_session(tmp_path)).data == BOOT[:5000]


def test_unplugged_pty_keeps_every_byte(tmp_path: Path) -> None:
    pair = Pty()
    proc = start(pair.name, tmp_path, "--until", "login", "--no-reconnect")
    pair.write(BOOT[:3000])
    time.sleep(0.3)
    os.close(pair.master)                        # the adapter disappears
    _, err = proc.communicate(timeout=20)
    os.close(pair.slave)
    assert proc.returncode == 3, err
    assert load_session(only_session(tmp_path)).data == BOOT[:3000]


def test_missing_port_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run([*BOOTLAB, "record", "/dev/ttyNOPE9", "--sessions", str(tmp_path)],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 3
    assert "no such port" in result.stderr and "Traceback" not in result.stderr


def test_second_recorder_on_the_same_port_is_refused(pty_pair: Pty, tmp_path: Path) -> None:
    first = start(pty_pair.name, tmp_path / "a")
    second = subprocess.run([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path / "b")],
                            capture_output=True, text=True, timeout=20)
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=20)
    assert second.returncode == 3
    assert "in use" in second.stderr


def test_kill_9_loses_at_most_the_last_flush_interval(pty_pair: Pty, tmp_path: Path) -> None:
    proc = start(pty_pair.name, tmp_path)
    line = b"[    1.000000] flood line with some text to fill the console buffer\r\n"
    sent: list[tuple[float, int]] = []
    total = 0
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        pty_pair.write(line * 20)
        total += len(line) * 20
        sent.append((time.monotonic(), total))
        time.sleep(0.002)
    killed_at = time.monotonic()
    proc.kill()
    proc.wait(timeout=20)
    session = load_session(only_session(tmp_path))
    # Sent more than half a second before the kill: read and written by then, even on a
    # loaded machine (the flush interval is 50 ms; the pty's buffer bounds the reader's lag).
    safe = max(n for t, n in sent if t <= killed_at - 0.5)
    assert len(session.data) >= safe
    assert session.data == (line * (total // len(line)))[:len(session.data)]


def test_bad_arguments_exit_2(pty_pair: Pty, tmp_path: Path) -> None:
    for extra in (["--until", "no_such_milestone"], ["--pattern", "("],
                  ["--profile", "nope"], ["--boots", "0"]):
        result = subprocess.run([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path),
                                 *extra], capture_output=True, text=True, timeout=20)
        assert result.returncode == 2, extra
        assert result.stderr.startswith("bootlab: ") and "Traceback" not in result.stderr
