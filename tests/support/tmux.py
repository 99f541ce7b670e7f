"""tmux as the app's real terminal: a private server with one window, keys sent with
`send-keys`, and what a person would see read back with `capture-pane`."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.paths import ROOT


class Tmux:
    """A private tmux server running one window of `size` (columns, rows)."""

    def __init__(self, folder: Path, size: tuple[int, int] = (160, 50)) -> None:
        self.socket = folder / "tmux.sock"
        self.size = size

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
                              capture_output=True, text=True, timeout=30)

    def start(self, command: list[str], env: dict[str, str]) -> None:
        line = " ".join([f"{k}={shlex.quote(v)}" for k, v in env.items()]
                        + [shlex.quote(word) for word in command])
        columns, rows = self.size
        # The window gets its size just after it is created: the app starts once it has it.
        done = self.run("new-session", "-d", "-s", "bench", "-x", str(columns), "-y", str(rows),
                        "-c", str(ROOT), "sleep 600")
        assert done.returncode == 0, done.stderr
        # COLUMNS and LINES, when the server inherited them, would override the pane's size.
        done = self.run("respawn-pane", "-k", "-t", "bench", "-c", str(ROOT),
                        f"exec env -u COLUMNS -u LINES {line}")
        assert done.returncode == 0, done.stderr

    def screen(self) -> list[str]:
        return self.run("capture-pane", "-p", "-t", "bench").stdout.splitlines()

    def keys(self, *keys: str) -> None:
        assert self.run("send-keys", "-t", "bench", *keys).returncode == 0

    def alive(self) -> bool:
        return self.run("has-session", "-t", "bench").returncode == 0

    def wait(self, condition: Callable[[list[str]], bool], what: str,
             timeout_s: float = 30.0) -> list[str]:
        deadline = time.monotonic() + timeout_s
        while True:
            screen = self.screen()
            if condition(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n"
                                     + "\n".join(screen))
            time.sleep(0.1)

    def resize(self, columns: int, rows: int) -> None:
        """Make the window this size (the app gets a resize)."""
        self.size = (columns, rows)
        assert self.run("resize-window", "-t", "bench", "-x", str(columns), "-y",
                        str(rows)).returncode == 0


def need_tmux() -> None:
    """Skip without tmux (fail under BOOTLAB_REQUIRE_TMUX: CI installs it)."""
    if shutil.which("tmux") is None:
        if os.environ.get("BOOTLAB_REQUIRE_TMUX"):
            pytest.fail("tmux is not installed (scripts/test installs it when run as root)")
        pytest.skip("tmux is not installed")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """A tmux server for the test, killed after it."""
    need_tmux()
    server = Tmux(tmp_path)
    yield server
    server.run("kill-server")


def app_env(folder: Path) -> dict[str, str]:
    """The environment of `python -m bootlab` in tmux: its own config and locks, this
    checkout on the path."""
    return {"BOOTLAB_CONFIG_DIR": str(folder / "config"),
            "BOOTLAB_LOCK_DIR": str(folder / "locks"), "PYTHONPATH": str(ROOT)}
