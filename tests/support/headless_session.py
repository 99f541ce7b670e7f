"""A whole live session and its replay driven with no front end: the fake board on a pty
booted, a key typed, a board job (reboot) run, the session replayed. Run by
`test_session_headless` in a fresh interpreter (`python headless_session.py FOLDER`), so what is
loaded at the end is what the session runtime needs; prints what it saw as JSON."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.settings import load_settings
from bootlab.core.capture.session import load_session
from bootlab.session.board_jobs import Board, reboot_job
from bootlab.session.events import Event, JobEnded, PortOpened, Received, ReplayEnded
from bootlab.session.live import LiveLink
from bootlab.session.replay import open_replay
from support.fake_board import FakeBoard
from support.pty_pair import Pty

PROFILE = load_profile("linux")


class Collector:
    """A `Post` that keeps every event and wakes whoever waits for one."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = threading.Condition()

    def __call__(self, event: Event) -> None:
        with self._changed:
            self.events.append(event)
            if isinstance(event, Received):
                event.handled = True          # what a front end does once it has drawn it
            self._changed.notify_all()

    def wait(self, condition: Callable[[list[Event]], bool], what: str,
             timeout_s: float = 60.0) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: condition(self.events), timeout_s):
                raise SystemExit(f"timed out waiting for {what}: "
                                 f"{[type(e).__name__ for e in self.events][-20:]}")


def reached(milestone: str, count: int = 1) -> Callable[[list[Event]], bool]:
    """The `count`th boot posted has reached `milestone`."""
    def check(events: list[Event]) -> bool:
        boots = {e.boot.index: e.boot for e in events if isinstance(e, Received) and e.boot}
        return sum(any(m.id == milestone for m in b.milestones) for b in boots.values()) >= count
    return check


def milestone_ids(events: list[Event]) -> list[str]:
    """The milestones of the first boot posted, as last posted."""
    boots = [e.boot for e in events if isinstance(e, Received) and e.boot]
    first = [boot for boot in boots if boot.index == min(b.index for b in boots)]
    return [m.id for m in first[-1].milestones] if first else []


def run(folder: Path) -> dict[str, object]:
    pair = Pty()
    board = FakeBoard(pair)
    link = LiveLink(pair.name, 115200, PROFILE, folder, {"label": "headless"}, pace_s=0.001)
    live = Collector()
    thread = threading.Thread(target=link.run, args=(live, lambda: False))
    thread.start()
    live.wait(lambda events: any(isinstance(e, PortOpened) for e in events), "the port")
    board.power_on()
    live.wait(reached("login"), "the first boot's login")
    link.send(b"\r")
    link.submit(reboot_job(Board(tuple(load_settings()), BoardFacts(), PROFILE, folder,
                                 "headless")))
    live.wait(lambda events: any(isinstance(e, JobEnded) for e in events), "the reboot job")
    live.wait(reached("login", 2), "the rebooted boot's login")
    link.stop()
    closed = link.wait_closed()
    thread.join(10)
    board.power_off()
    (ended,) = [e for e in live.events if isinstance(e, JobEnded)]
    sessions = link.session_paths()
    replayed = Collector()
    replay = open_replay(sessions[0], speed=0)
    player = threading.Thread(target=replay.player.run, args=(replayed, lambda: False))
    player.start()
    replayed.wait(lambda events: any(isinstance(e, ReplayEnded) for e in events), "the replay")
    replay.player.stop()
    player.join(10)
    first = load_session(sessions[0])
    return {
        "closed": closed,
        "job": [ended.outcome, ended.text],
        "sessions": [load_session(path).meta.get("role") for path in sessions],
        "sent": [data.decode() for _, data in first.sent],
        "live_milestones": milestone_ids(live.events),
        "replay_milestones": milestone_ids(replayed.events),
        "loaded": [name for name in ("textual", "rich") if name in sys.modules],
    }


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1]))))
