"""An A/B run spread over several boards: rounds handed out to the boards, one thread each.

`Spread` hands each board its next run (`ABState.next_for`: a round stays on one board, so each
board boots every variant equally often) and numbers the boots; whoever changes the state or
judges a look holds `Spread.lock`, so a board that finds nothing to do waits while another board
may still open more rounds (a look that goes on). `in_parallel` runs one thread per board: the
first failure, or Ctrl-C in the calling thread, stops every board's console at its next read
(`Console.stop`) and is raised once all threads have ended, the consoles usable again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from bootlab.control.board_console import Stopped
from bootlab.control.engine import Bench
from bootlab.core.board.abplan import ABState

WAIT_S = 0.2
"""How often a board with nothing to do looks again (it is also woken when a round ends)."""


class Spread:
    """Which board boots which run of one A/B state, and how many boots are under way."""

    def __init__(self, state: ABState, boards: list[str]) -> None:
        if len(set(boards)) != len(boards):
            twice = next(b for b in boards if boards.count(b) > 1)
            raise ValueError(f"two boards of the run are both called {twice!r}: give each its "
                             "own name (--board, or its port)")
        self.state = state
        self.boards = boards
        self.lock = threading.Condition()
        """Held to change the state, to judge a look, and to hand out runs."""
        self.stopped = False
        self._busy: dict[int, str] = {}
        """Round -> the board booting it (until all its runs are done)."""
        self._booting: set[str] = set()

    def claim(self, board: str) -> tuple[tuple[str, int], int] | None:
        """The next run for `board` and its boot's number; None once nothing is left for it
        (waits while another board's round may still lead to more: a look not judged yet).

        Raises:
            Stopped: the run was stopped meanwhile.
        """
        with self.lock:
            while True:
                if self.stopped:
                    raise Stopped("stopped")
                step = self.state.next_for(board, self.boards, self._busy)
                if step is not None:
                    self._busy[step[1]] = board
                    self._booting.add(board)
                    return step, len(self.state.done) + len(self._booting)
                if not any(other != board for other in self._busy.values()):
                    return None
                self.lock.wait(WAIT_S)

    def others_busy(self, board: str) -> bool:
        """Whether another board is in the middle of a round."""
        with self.lock:
            return any(other != board for other in self._busy.values())

    def booted(self, board: str, step: tuple[str, int]) -> None:
        """`board` has booted `step` (done or not): its round is free once all of it is done.
        Call holding `lock`; the waiting boards are woken."""
        self._booting.discard(board)
        if all((variant, step[1]) in self.state.done for variant in self.state.variants):
            self._busy.pop(step[1], None)
        self.lock.notify_all()


def in_parallel(benches: Mapping[str, Bench], spread: Spread,
                work: Callable[[str, Bench], None],
                failed: Callable[[str, BaseException], None]) -> None:
    """Run `work(board, bench)` for every board on a thread of its own and wait for all.

    The first exception of a board is told (`failed`) and stops the others (their consoles
    raise `Stopped`); it is raised here once every thread has ended. Ctrl-C stops them all the
    same and is raised again here.
    """
    errors: list[BaseException] = []

    def stop_all() -> None:
        with spread.lock:
            spread.stopped = True
            spread.lock.notify_all()
        for bench in benches.values():
            bench.console.stop.set()

    def run(board: str, bench: Bench) -> None:
        try:
            work(board, bench)
        except Stopped:
            return
        except BaseException as error:  # every failure stops the run, and is raised below
            with spread.lock:
                first = not errors
                errors.append(error)
            stop_all()
            if first:
                failed(board, error)

    threads = [threading.Thread(target=run, args=item, name=f"A/B board {item[0]}", daemon=True)
               for item in benches.items()]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(WAIT_S)
    except KeyboardInterrupt:
        stop_all()
        for thread in threads:
            thread.join()
        raise
    finally:
        for bench in benches.values():
            bench.console.stop.clear()
    if errors:
        raise errors[0]
