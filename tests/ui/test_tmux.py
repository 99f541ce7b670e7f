"""The real app in a real terminal: `bootlab PORT` in tmux, a recorded boot played into a pty.

tmux is the terminal here: the app draws into it, keys are sent with `send-keys`, and what a
person would see is read back with `capture-pane`, phase pane included. Skipped when tmux is
not installed, unless BOOTLAB_REQUIRE_TMUX is set (CI), where that is a failure.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest
from support.paths import ROOT, example_sessions
from support.pty_pair import Pty
from support.tmux import Tmux

from bootlab.core.analysis.phases import phase_rows
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source
from bootlab.ui.widgets.phase_panel import GOAL_MARK

SIZE = (160, 50)
SPEED = 4.0
"""The recorded boot is played this many times faster than it happened."""


def phase_pane(screen: list[str]) -> list[tuple[str, str]]:
    """(milestone, elapsed) of every row of the phase pane as drawn."""
    top = next(i for i, row in enumerate(screen) if "─ phases " in row)
    left = screen[top].index("╭─ phases ")
    right = screen[top].index("╮", left)
    rows = []
    for row in screen[top + 2:]:
        if row[left:left + 1] == "╰":
            break
        cells = row[left + 1:right].replace(f" {GOAL_MARK}", "").split()
        if cells:
            rows.append((cells[0], cells[1]))
    return rows


def play(board: Pty, chunks: list[tuple[int, bytes]], speed: float) -> None:
    """Write recorded chunks with their original spacing, `speed` times faster."""
    start = time.monotonic()
    for t_ns, data in chunks:
        delay = start + t_ns / 1e9 / speed - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        board.write(data)


def test_the_app_in_tmux_shows_the_boot_s_phases_and_answers_keys(
        tmux: Tmux, pty_pair: Pty, tmp_path: Path) -> None:
    # GIVEN bootlab on a pty in a tmux window
    recorded = load_session(example_sessions("default")[0])
    sessions = tmp_path / "sessions"
    tmux.start([sys.executable, "-m", "bootlab", pty_pair.name, "--sessions", str(sessions)],
               {"BOOTLAB_CONFIG_DIR": str(tmp_path / "config"),
                "BOOTLAB_LOCK_DIR": str(tmp_path / "locks"), "PYTHONPATH": str(ROOT)})
    tmux.wait(lambda s: any(" connected " in row for row in s), "the port to open")
    # WHEN a recorded boot is played into the port
    play(pty_pair, recorded.chunks, SPEED)
    screen = tmux.wait(lambda s: "login" in [m for m, _ in phase_pane(s)],
                       "login in the phase pane")
    # THEN the phase pane shows the boot's milestones, named and timed as the analysis of
    # the session the app recorded (and as the original boot, played faster)
    [path] = sessions.glob("*.jsonl")
    deadline = time.monotonic() + 5  # records are written at least every 100 ms
    while load_session(path).data != recorded.data and time.monotonic() < deadline:
        time.sleep(0.05)
    source = open_source(path)
    rows = phase_rows(analyze(source.data, load_profile("linux"), source.line_time).boots[0])
    # (at 160 columns the milestone column has room for every name: none is cut)
    assert phase_pane(screen) == [(r.milestone.id, f"{r.elapsed_s:.3f}")
                                  for r in rows if r.elapsed_s is not None]
    assert any(f" login {GOAL_MARK} " in row for row in screen)   # the goal, login by default
    original = open_source(example_sessions("default")[0])
    original_rows = phase_rows(analyze(original.data, load_profile("linux"),
                                       original.line_time).boots[0])
    assert [r.milestone.id for r in rows] == [r.milestone.id for r in original_rows]
    for live, played in zip(rows, original_rows, strict=True):
        assert live.elapsed_s is not None and played.elapsed_s is not None
        assert live.elapsed_s == pytest.approx(played.elapsed_s / SPEED, abs=0.5)
    tmux.wait(lambda s: any("board login:" in row for row in s), "the login prompt")
    # AND keys reach the app through the Ctrl-T escape
    tmux.keys("C-t", "t")
    tmux.wait(lambda s: any("console · delta" in row for row in s), "the delta time column")
    tmux.keys("C-t", "q")
    deadline = time.monotonic() + 15
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tmux.alive()
    assert load_session(path).data == recorded.data


def test_in_a_16_colour_terminal_the_app_draws_only_the_16_colours(tmux: Tmux,
                                                                    tmp_path: Path) -> None:
    # GIVEN a terminal that declares 16 colours (TERM=screen, no COLORTERM)
    tmux.start(["env", "-u", "COLORTERM", "TERM=screen", sys.executable, "-m", "bootlab"],
               {"BOOTLAB_CONFIG_DIR": str(tmp_path / "config"), "PYTHONPATH": str(ROOT)})
    # WHEN the app replays the bundled boot to its login prompt
    screen = tmux.wait(lambda s: any("─ phases " in row for row in s)
                       and "login" in [m for m, _ in phase_pane(s)],
                       "login in the phase pane", timeout_s=60)
    coloured = tmux.run("capture-pane", "-e", "-p", "-t", "bench").stdout
    # THEN it is readable and every colour it set is one of the 16 (no 256-colour or RGB codes)
    assert [m for m, _ in phase_pane(screen)][:2] == ["bootloader", "env_loaded"]
    codes = [code for sgr in re.findall(r"\x1b\[([0-9;]*)m", coloured)
             for code in sgr.split(";") if code]
    assert any(code in {str(c) for c in (*range(30, 38), *range(90, 98))} for code in codes)
    assert not re.search(r"\x1b\[[0-9;]*[34]8;[25];", coloured)
