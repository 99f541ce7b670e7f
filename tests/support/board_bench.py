"""The app on a fake board (`fake_board`) for the board-control Pilot tests."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console, RenderableType
from textual.message import Message
from textual.pilot import Pilot

from bootlab.core.analysis.goals import Goal, goal_meta, with_goal
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.settings import load_settings
from bootlab.core.capture.session import Session, load_session
from bootlab.session import events
from bootlab.session.live import LiveLink
from bootlab.ui.app import BootlabApp
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.messages import JobEnded
from support.fake_board import FakeBoard
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty

PROFILE = load_profile("linux")


@dataclass
class Bench:
    """The app on the fake board's pty, and what it posted."""

    app: BootlabApp
    link: LiveLink
    board: FakeBoard
    pilot: Pilot[None]
    seen: list[Message]
    folder: Path

    @property
    def screen(self) -> MainScreen:
        return main_screen(self.app)

    def ended(self) -> list[events.JobEnded]:
        return [m.event for m in self.seen if isinstance(m, JobEnded)]

    def sessions(self, role: str | None = None) -> list[Session]:
        out = [load_session(p) for p in sorted(self.folder.glob("*.jsonl"))]
        return [s for s in out if role is None or s.meta.get("role") == role]


@asynccontextmanager
async def open_bench(pair: Pty, folder: Path, goal: Goal | None = None) -> AsyncIterator[Bench]:
    """The app connected to a fake board that has booted to its login prompt (measuring boots
    to `goal`, as `bootlab PORT --until/--pattern` says; default login)."""
    board = FakeBoard(pair)
    goal = goal or Goal()
    link = LiveLink(pair.name, 115200, with_goal(PROFILE, goal), folder,
                    {"label": "bench", "goal": goal_meta(goal)}, pace_s=0.001)
    app = BootlabApp(link, PROFILE, load_settings(), sessions=folder)
    seen: list[Message] = []
    async with app.run_test(size=(130, 40), message_hook=seen.append) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "connected", "the port to open")
        board.power_on()
        await wait_until(pilot, lambda: reached(screen, "login"), "the first boot", 20)
        yield Bench(app, link, board, pilot, seen, folder)
    board.power_off()
    assert link.wait_closed()


def rendered(renderable: RenderableType) -> str:
    """What a Rich renderable shows, as plain text."""
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def reached(screen: MainScreen, milestone: str) -> bool:
    """The phase pane shows the milestone."""
    return any(row.milestone.id == milestone for row in screen.boot_state.rows)


async def mark(bench: Bench, key: str) -> None:
    """Mark a setting pending from the console (Ctrl-T Tab reaches the panes)."""
    await bench.pilot.press("ctrl+t", "tab", key)


async def job_done(bench: Bench, timeout_s: float = 60) -> events.JobEnded:
    """Wait for the one board job to end, and check it succeeded."""
    await wait_until(bench.pilot, bench.ended, "the board job", timeout_s)
    (ended,) = bench.ended()
    assert ended.outcome == "done", ended.text
    return ended
