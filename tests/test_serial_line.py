"""A serial terminal's basics on `bootlab record`, on a real pty: the line's framing, CR/LF
mapping in and out, the echo and the plain-text log beside the session."""

from __future__ import annotations

import signal
import subprocess
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import BOOTLAB
from support.pty_pair import Pty

from bootlab.commands.parsers import build_parser
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source
from bootlab.transports.line import line_of
from bootlab.transports.port import open_port


def start(port: str, folder: Path, *extra: str) -> subprocess.Popen[str]:
    """`bootlab record` on the port, once it says it is recording."""
    proc = subprocess.Popen([*BOOTLAB, "record", port, "--sessions", str(folder), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert "recording" in first, first + proc.stderr.read()
    return proc


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C, then what it printed."""
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode in (0, 1), err  # 1: stopped before a goal, none was asked
    return out, err


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Until `condition()` holds (a file written by the recorder)."""
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def wait_for_lines(path: Path, count: int) -> None:
    """Until the log holds `count` lines (it is flushed at every read)."""
    wait_for(lambda: path.exists() and path.read_text().count("\n") >= count,
             f"{count} lines in {path}")


def test_the_line_is_framed_as_asked(pty_pair: Pty, tmp_path: Path) -> None:
    """--data-bits, --parity, --stop-bits and --flow reach the tty: read back with termios
    for what a pty keeps (Linux ptys force 8 bits and no parity), from the opened port for
    the rest."""
    proc = start(pty_pair.name, tmp_path, "-q", "--data-bits", "7", "--parity", "even",
                 "--stop-bits", "2", "--flow", "rtscts", "--send", "x")
    assert pty_pair.read(1) == b"x"  # sent after the port was opened and set up
    cflag = termios.tcgetattr(pty_pair.slave)[2]
    stop(proc)
    assert cflag & termios.CSTOPB and cflag & termios.CRTSCTS
    args = build_parser().parse_args(
        ["record", pty_pair.name, "--data-bits", "7", "--parity", "odd", "--flow", "xonxoff",
         "--no-dtr"])
    port = open_port(pty_pair.name, 115200, line_of(args))
    try:
        assert (port.bytesize, port.parity, port.stopbits) == (7, "O", 1)
        assert port.xonxoff and not port.rtscts and port.dtr is False
        iflag = termios.tcgetattr(pty_pair.slave)[0]
        assert iflag & termios.IXON and iflag & termios.IXOFF
    finally:
        port.close()


def test_omap_maps_what_is_sent(pty_pair: Pty, tmp_path: Path) -> None:
    """--omap crlf: a CR typed (or in --send) goes out as LF, and is recorded as sent."""
    proc = start(pty_pair.name, tmp_path, "-q", "--omap", "crlf", "--send", "version\\r")
    assert pty_pair.read(8) == b"version\n"
    stop(proc)
    [path] = tmp_path.glob("*.jsonl")
    assert [data for _, data in load_session(path).sent] == [b"version\n"]


def test_imap_frames_lines_on_a_lone_cr(pty_pair: Pty, tmp_path: Path) -> None:
    """--imap crlf: a board ending its lines with a lone CR has them framed as lines (echo,
    log, analysis), while the session keeps the bytes as received."""
    log = tmp_path / "console.log"
    proc = start(pty_pair.name, tmp_path / "s", "--imap", "crlf", "--log", str(log))
    sent = b"U-Boot 2024.01 (Jan 01 2024)\rStarting kernel ...\r"
    pty_pair.write(sent)
    wait_for_lines(log, 2)
    out, _ = stop(proc)
    assert [line.split("] ", 1)[1] for line in out.splitlines()] == [
        "U-Boot 2024.01 (Jan 01 2024)", "Starting kernel ..."]
    [path] = (tmp_path / "s").glob("*.jsonl")
    session = load_session(path)
    assert session.data == sent and session.meta["imap"] == ["crlf"]
    source = open_source(path)
    ids = [m.id for m in analyze(source.data, load_profile("linux"), source.line_time).milestones]
    assert "starting_kernel" in ids


def test_the_log_is_the_echo_and_survives_quiet(pty_pair: Pty, tmp_path: Path) -> None:
    """--log FILE holds what is echoed, `[elapsed delta] text`, escapes removed; with -q too;
    a second recording appends."""
    log = tmp_path / "console.log"
    proc = start(pty_pair.name, tmp_path / "a", "--log", str(log))
    pty_pair.write(b"first line\r\n\x1b[31mred\x1b[0m line\r\nlast")
    wait_for_lines(log, 2)
    out, _ = stop(proc)
    text = log.read_text()
    assert text == out
    assert [line.split("] ", 1)[1] for line in text.splitlines()] == [
        "first line", "red line", "last"]
    assert text.startswith("[   0.000000  0.000000] first line\n")
    proc = start(pty_pair.name, tmp_path / "b", "-q", "--log", str(log))
    pty_pair.write(b"again\r\n")
    wait_for_lines(log, 4)
    out, _ = stop(proc)
    assert out == "" and log.read_text().startswith(text)
    assert log.read_text().endswith("] again\n")


@pytest.mark.parametrize(("path", "says"), [
    ("missing/console.log", "cannot open the log"),
    ("/dev/full", "the log cannot be written"),
])
def test_a_log_that_cannot_be_written_is_said_and_the_session_kept(
        pty_pair: Pty, tmp_path: Path, path: str, says: str) -> None:
    log = tmp_path / path if not path.startswith("/") else Path(path)
    proc = subprocess.Popen([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path),
                             "-q", "--log", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if says.startswith("cannot open"):
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 2 and f"{log}: {says}" in err and "Traceback" not in err
        return
    assert proc.stderr is not None and "recording" in proc.stderr.readline()
    pty_pair.write(b"a line\r\nanother\r\n")
    line = proc.stderr.readline()
    assert f"{log}: {says}" in line and "the session goes on" in line
    pty_pair.write(b"after\r\n")
    [session] = tmp_path.glob("*.jsonl")
    wait_for(lambda: load_session(session).data == b"a line\r\nanother\r\nafter\r\n",
             "every line in the session")
    stop(proc)


def test_an_unknown_map_is_refused(pty_pair: Pty, tmp_path: Path) -> None:
    result = subprocess.run([*BOOTLAB, "record", pty_pair.name, "--sessions", str(tmp_path),
                             "--imap", "crlf,nope"], capture_output=True, text=True, timeout=20)
    assert result.returncode == 2 and "unknown map nope" in result.stderr
