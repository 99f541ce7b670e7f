"""One port, one user, against the real serial terminals: picocom, minicom and tio hold a pty
and `bootlab record` is refused naming them; bootlab holds it and they are refused. These use
the real lock folder (/var/lock), as those programs do."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import time
import tty
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import BOOTLAB
from support.terminal import Terminal

from bootlab.transports.lock import DEFAULT_LOCK_DIR, lock_name, pid_alive

TOOLS = {
    # name: (command before the device, what it prints once it holds the port)
    "picocom": (["picocom", "-b", "115200"], b"Terminal ready"),
    "minicom": (["minicom", "-D"], b"Welcome to minicom"),
    "tio": (["tio"], b"Connected"),
}
REFUSALS = {"picocom": b"cannot lock", "minicom": b"is locked", "tio": b"locked by another"}


@pytest.fixture
def device() -> Iterator[str]:
    """A pty whose other end only this fixture holds (so the holder named is the tool)."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    name = os.ttyname(slave)
    os.close(slave)
    yield name
    os.close(master)
    lock = DEFAULT_LOCK_DIR / lock_name(name)
    if lock.exists() and not pid_alive(int(lock.read_text().strip() or 0)):
        lock.unlink()                                   # a tool killed before it cleaned up


@pytest.fixture
def real_locks(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment for bootlab with the real lock folder, as the tools use."""
    monkeypatch.delenv("BOOTLAB_LOCK_DIR", raising=False)
    if not os.access(DEFAULT_LOCK_DIR, os.W_OK):
        pytest.skip(f"{DEFAULT_LOCK_DIR} is not writable here")
    return dict(os.environ)


def require(tool: str) -> None:
    if shutil.which(tool) is None:
        message = f"{tool} is not installed (apt-get install {tool}; scripts/test does as root)"
        if os.environ.get("BOOTLAB_REQUIRE_TOOLS"):
            pytest.fail(message)
        pytest.skip(message)


def start(tool: str, name: str) -> Terminal:
    """The tool on its own terminal, holding the device."""
    command, ready = TOOLS[tool]
    term = Terminal([*command, name], env={"HOME": "/nonexistent"})
    term.wait_for(ready, timeout_s=45)
    return term


def stop(term: Terminal) -> None:
    term.process.terminate()
    term.close(10)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_record_is_refused_naming_the_tool(tool: str, device: str, real_locks: dict[str, str],
                                           tmp_path: Path) -> None:
    require(tool)
    term = start(tool, device)
    try:
        done = subprocess.run([*BOOTLAB, "record", device, "--sessions", str(tmp_path),
                               "--timeout", "5"], capture_output=True, text=True, timeout=60,
                              env=real_locks)
    finally:
        stop(term)
    assert done.returncode == 3, done.stderr
    assert f"{device}: port is in use by {tool} (pid {term.process.pid})" in done.stderr
    assert not list(tmp_path.glob("*.jsonl"))             # nothing recorded from it


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_the_tool_is_refused_while_bootlab_records(tool: str, device: str,
                                                   real_locks: dict[str, str],
                                                   tmp_path: Path) -> None:
    require(tool)
    recorder = subprocess.Popen([*BOOTLAB, "record", device, "--sessions", str(tmp_path),
                                 "--timeout", "30", "-q"], stderr=subprocess.PIPE,
                                env=real_locks)
    lock = DEFAULT_LOCK_DIR / lock_name(device)
    try:
        deadline = time.monotonic() + 45
        while not lock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.read_text() == f"{recorder.pid:>10}\n"   # HDB UUCP, as the tools read it
        command, _ = TOOLS[tool]
        term = Terminal([*command, device], env={"HOME": "/nonexistent"})
        code = term.close(15)
        assert code != 0 and REFUSALS[tool] in term.snapshot(), term.snapshot()[-500:]
    finally:
        recorder.terminate()
        recorder.communicate(timeout=30)
    assert recorder.returncode == 0                          # no goal: stopping is success
    assert not lock.exists()                                 # released on the way out


def test_a_second_bootlab_is_refused_and_a_stale_lock_taken_over(
        device: str, real_locks: dict[str, str], tmp_path: Path) -> None:
    lock = DEFAULT_LOCK_DIR / lock_name(device)
    gone = subprocess.Popen(["true"])
    gone.wait()
    lock.write_text(f"{gone.pid:>10}\n")                    # left by a crashed program
    first = subprocess.Popen([*BOOTLAB, "record", device, "--sessions", str(tmp_path),
                              "--timeout", "30", "-q"], stderr=subprocess.PIPE, env=real_locks)
    try:
        deadline = time.monotonic() + 45
        while lock.read_text() != f"{first.pid:>10}\n" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.read_text() == f"{first.pid:>10}\n"
        second = subprocess.run([*BOOTLAB, "record", device, "--sessions", str(tmp_path),
                                 "--timeout", "5"], capture_output=True, text=True, timeout=60,
                                env=real_locks)
    finally:
        first.terminate()
        first.communicate(timeout=30)
    assert second.returncode == 3
    holder = Path(BOOTLAB[0]).name[:15]  # the process name: the interpreter as invoked
    assert f"port is in use by {holder} (pid {first.pid}) (lock file {lock})" in second.stderr
