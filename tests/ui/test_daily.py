"""The bench console as a daily tool, in a real terminal (tmux, tests/support/tmux.py) at the
sizes people use it at: what a new user hits in the first hour (opening a file, the sessions
screen, the goal on screen, long lines, the Ctrl-T keys from every pane, nothing cut off that
has room, a replay that plays like a player)."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

from support.paths import example_sessions
from support.tmux import Tmux, app_env


def start(tmux: Tmux, folder: Path, *args: str, size: tuple[int, int] = (80, 24)) -> None:
    """`python -m bootlab ARGS` in the tmux window, `size` columns by rows."""
    tmux.size = size
    tmux.start([sys.executable, "-m", "bootlab", *args], app_env(folder))


def ended(screen: list[str]) -> bool:
    return any(" ended" in row for row in screen)


def test_a_session_file_given_opens_its_replay_and_f2_lists_the_folder(
        tmux: Tmux, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for path in example_sessions()[:3]:
        shutil.copy(path, sessions)
    first = sorted(sessions.glob("*.jsonl"))[0]
    start(tmux, tmp_path, str(first), "--speed", "0", "--sessions", str(sessions))
    tmux.wait(ended, "the replay of the file to end")
    tmux.keys("F2")
    def listed(screen: list[str]) -> list[str]:
        return [row for row in screen if " default " in row or " quiet " in row]

    screen = tmux.wait(lambda s: len(listed(s)) == 3,
                       "the sessions screen, its rows drawn (no spinner left over it)")
    assert not any("● ●" in row for row in screen)
    assert any("sessions in " in row for row in screen)


def test_a_grabserial_log_opens_in_the_app_too(tmux: Tmux, tmp_path: Path) -> None:
    log = tmp_path / "boot.log"
    log.write_text("[0.000100 0.000100] U-Boot 2023.01\n[1.200000 1.199900] Starting kernel "
                   "...\n[1.800000 0.600000] [    0.000000] Booting Linux on physical CPU 0x0\n"
                   "[3.100000 1.300000] board login: \n")
    start(tmux, tmp_path, str(log), "--speed", "0", "--sessions", str(tmp_path / "s"))
    screen = tmux.wait(lambda s: ended(s) and any("board login:" in row for row in s),
                       "the replay of the log to its end, drawn")
    assert any("Starting kernel" in row for row in screen)


def test_at_80x24_the_goal_is_on_screen_with_its_time(tmux: Tmux, tmp_path: Path) -> None:
    path = example_sessions("default")[0]
    start(tmux, tmp_path, str(path), "--speed", "0", "--sessions", str(tmp_path / "s"))
    # the phase pane follows the boot to its goal, and the status line says the goal's time
    screen = tmux.wait(lambda s: any(" login ◎ " in row for row in s)
                       and re.search(r"│ login \d+\.\d\d s( │|$)", s[-2].rstrip()) is not None,
                       "the goal's row and its time on the status line")
    assert "replay" in screen[-2]


def test_ctrl_t_keys_work_from_every_pane_and_pending_is_plain(tmux: Tmux,
                                                               tmp_path: Path) -> None:
    path = example_sessions("default")[0]
    start(tmux, tmp_path, str(path), "--speed", "0", "--sessions", str(tmp_path / "s"))
    tmux.wait(ended, "the replay to end")
    # typed ahead in one write: two Tabs reach the settings pane before its key q arrives
    tmux.keys("Tab", "Tab", "q")                       # quiet's key: marked pending, and said
    tmux.wait(lambda s: any("pending quiet: P apply" in row for row in s),
              "the pending setting on the status line")
    tmux.keys("C-t", "q")                              # Ctrl-T q quits, from this pane too
    deadline = time.monotonic() + 15
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tmux.alive(), "\n".join(tmux.screen())


def test_long_lines_wrap_and_a_search_brings_its_match_into_view(tmux: Tmux,
                                                                 tmp_path: Path) -> None:
    path = example_sessions("default")[0]
    start(tmux, tmp_path, str(path), "--speed", "0", "--sessions", str(tmp_path / "s"))
    tmux.wait(lambda s: any("board login:" in row for row in s), "the replay to its end")
    # the kernel command line, past 80 columns: a search finds it, says which of how many,
    # and brings the match into view though it sits past the pane's right edge
    # typed ahead in one write, as a fast typist over SSH does: every key after "/" is the query
    tmux.keys("-l", "/rootwait")
    tmux.keys("Enter")
    screen = tmux.wait(lambda s: any("/rootwait: 1/" in row for row in s),
                       "the match's place among the matches")
    assert any("rootwait" in row for row in screen[1:10]), "\n".join(screen)
    tmux.keys("w")                                     # wrap: the whole line on screen
    screen = tmux.wait(lambda s: any("console · elapsed · wrapped" in row for row in s),
                       "the console wrapped")
    joined = "".join(row.strip("│ ▅▇▏") for row in screen[1:10]).replace(" ", "")
    assert "bootargs=console=ttyAMA0,115200root=/dev/vda2rootfstype=ext4rorootwait" in \
        joined, "\n".join(screen)                  # every character, none lost at a wrap
    tmux.keys("n")                                     # the next match wraps around
    tmux.wait(lambda s: any("wrapped to the top" in row or "/rootwait: 2/" in row
                            for row in s), "the next match")
    # a "/" inside the search bar is text: a path is a query like any other
    tmux.keys("-l", "/root=/dev/")
    tmux.keys("Enter")
    tmux.wait(lambda s: any("/root=/dev/: 1/" in row for row in s), "a query holding a slash")
