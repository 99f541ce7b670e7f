"""`bootlab ab` over several identical boards (bootlab/control/abspread.py, `--also-port`): two
fake boards on two real ptys, the boots spread over both in parallel and balanced per board,
the wall time against the same run on one board, the statistics blocked by board when one board
is slower, and a run stopped by Ctrl-C resumed on both boards."""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_board import FakeBoard
from support.pty_pair import Pty

from bootlab.cli import main
from bootlab.commands.ab import close, open_boards, prepare_ab
from bootlab.commands.parsers import build_parser
from bootlab.control import abrun
from bootlab.control.abrun import BoardFailed, BootStarting, report
from bootlab.core.analysis.goals import Goal
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.analysis.stats import difference
from bootlab.core.board.abplan import ABState
from bootlab.core.board.facts import facts_from_log
from bootlab.core.capture.session import load_session
from bootlab.core.recording import recorder
from bootlab.core.recording.recorder import Recorder, StopRule
from bootlab.exitcodes import NOT_MET

AB = ("ab", "--variant", "base:", "--variant", "quiet", "--boots", "4", "--seed", "5",
      "--pace-ms", "1")


@pytest.fixture
def ptys() -> Iterator[list[Pty]]:
    pairs = [Pty(), Pty()]
    yield pairs
    for pair in pairs:
        pair.close()


def _drain(pair: Pty) -> None:
    """Forget what either side left unread (a run stopped halfway), as a board switched off
    and on again would."""
    for fd in (pair.master, pair.slave):
        while select.select([fd], [], [], 0)[0]:
            os.read(fd, 65536)


def run_on_boards(pairs: list[Pty], folder: Path, *argv: str,
                  kernel_s: tuple[float, ...] = (0.0, 0.0), line_s: float = 0.002,
                  interrupt_after: int | None = None) -> tuple[int, list[FakeBoard], float]:
    """Run `bootlab ab` on the first pty with `--also-port` for the others, in this thread;
    each board powers on once bootlab has opened the ports. `kernel_s`: each board's kernel
    start-up time (a slower board); `line_s`: what each printk line costs (`FakeBoard`);
    `interrupt_after`: Ctrl-C once this many boots started.
    Returns the exit code, the boards and the wall time of the command."""
    for pair in pairs:
        _drain(pair)
    boards = [FakeBoard(pair, kernel_s=k, line_s=line_s)
              for pair, k in zip(pairs, kernel_s, strict=False)]
    earlier = set(folder.glob("*.jsonl"))
    done = threading.Event()

    def watch() -> None:
        deadline = time.monotonic() + 10
        while len(set(folder.glob("*.jsonl")) - earlier) < len(pairs) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        for board in boards:
            board.power_on()
        while interrupt_after is not None and not done.wait(0.02):
            if sum(board.commands.count("boot") for board in boards) >= interrupt_after:
                os.kill(os.getpid(), signal.SIGINT)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    others = [arg for pair in pairs[1:] for arg in ("--also-port", pair.name)]
    start = time.monotonic()
    try:
        code = main([argv[0], pairs[0].name, *argv[1:], *others, "--sessions", str(folder),
                     "--timeout", "20"])
    finally:
        wall = time.monotonic() - start
        done.set()
        watcher.join(timeout=5)
        for board in boards:
            board.power_off()
    return code, boards, wall


def per_board(state: ABState) -> Counter[tuple[str, str]]:
    """Boots done per (board, variant)."""
    return Counter((state.boards[step], step[0]) for step in state.done)


def rounds_on_one_board(state: ABState) -> bool:
    return all(len({state.boards[(v, run)] for v in state.variants if (v, run) in state.done})
               <= 1 for run in range(1, state.boots + 1))


def test_two_boards_halve_the_wall_time_with_the_same_verdict(
        ptys: list[Pty], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, (alone,), one_s = run_on_boards(ptys[:1], tmp_path / "one", *AB)
    one_out, one_err = capsys.readouterr()
    assert code == 0, one_err
    # one board: untagged; a setup boot first (a first run on the port), then 8 measured
    assert alone.commands.count("boot") == 9 and "[" not in one_err
    code, boards, two_s = run_on_boards(ptys, tmp_path / "two", *AB)
    out, err = capsys.readouterr()
    assert code == 0, err
    print(f"wall time: one board {one_s:.1f} s, two boards {two_s:.1f} s "
          f"(ratio {two_s / one_s:.2f})")
    assert two_s < 0.8 * one_s
    state = ABState.load(tmp_path / "two" / "ab-ab.json")
    assert state.finished and len(state.done) == 8
    names = [pair.name for pair in ptys]
    counts = per_board(state)
    # each board booted every variant equally often, each round on one board, both in use
    assert {board for board, _ in counts} == set(names)
    for name in names:
        assert counts[(name, "base")] == counts[(name, "quiet")] >= 1
        assert counts[(name, "base")] * 2 + 1 == sum(b.commands.count("boot") for b in boards
                                                     if b.pair.name == name)   # + its setup
    assert rounds_on_one_board(state)
    for step, session in state.done.items():
        meta = load_session(tmp_path / "two" / session).meta
        assert meta["ab"]["board"] == state.boards[step] == meta["port"]
    assert f"[{names[0]}] boot " in err and f"[{names[1]}] boot " in err
    # the same verdict, now said to be blocked by board, with the medians per board
    verdict = "quiet: faster to login by "
    assert verdict in one_out and verdict in out
    assert "on 2 boards, blocked" in out and "medians per board" in out
    assert "on 2 boards" not in one_out and "medians per board" not in one_out


def test_a_slower_board_is_blocked_out(ptys: list[Pty], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Printk lines cost nothing here (each line's sleep jitters with the host's load): the
    # boots spread by milliseconds, the second board is 300 ms slower, quiet saves the
    # writing of the kernel's lines.
    code, _, _ = run_on_boards(ptys, tmp_path, *AB, kernel_s=(0.0, 0.3), line_s=0.0)
    out, err = capsys.readouterr()
    assert code == 0, err
    state = ABState.load(tmp_path / "ab-ab.json")
    result = report(state, load_profile("linux"), "first-byte", goal=Goal())
    fast, slow = (pair.name for pair in ptys)
    assert result.boards() == sorted([fast, slow])
    medians = dict(result.board_medians())["login"]
    by = dict(zip([(b, v) for b in result.boards() for v in result.variants], medians,
                  strict=True))
    for variant in result.variants:
        slow_s, fast_s = by[(slow, variant)], by[(fast, variant)]
        assert slow_s is not None and fast_s is not None and slow_s - fast_s > 0.2
    base, quiet = result.columns
    blocked = quiet.difference(base, "login")
    welch = difference(base.values["login"], quiet.values["login"])
    assert blocked is not None and welch is not None and blocked.boards == 2
    print(f"login interval: blocked {(blocked.high - blocked.low) * 1000:.0f} ms, unblocked "
          f"{(welch.high - welch.low) * 1000:.0f} ms")
    assert blocked.high - blocked.low < 0.5 * (welch.high - welch.low)
    assert "login (against base; one per variant; blocked by board" in out
    # compare of the run: blocked too; --by-board: a column per variant and board
    assert main(["compare", str(tmp_path / "ab-ab.json")]) == 0
    text = capsys.readouterr().out
    assert "medians per board" in text and "on 2 boards, blocked" in text
    assert main(["compare", "--by-board", str(tmp_path / "ab-ab.json")]) == 0
    head = capsys.readouterr().out.splitlines()[0].split()
    assert set(head[1::2]) == {f"{v}@{b}" for v in ("base", "quiet") for b in (fast, slow)}
    assert head[1].startswith("base@") and head[3].startswith("base@")   # the reference first
    sessions = [str(tmp_path / name) for name in state.done.values()]
    assert main(["report", *sessions, "--format", "markdown"]) == 0
    assert "medians per board" in capsys.readouterr().out


def test_ctrl_c_stops_both_boards_and_the_run_resumes(ptys: list[Pty], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, boards, _ = run_on_boards(ptys, tmp_path, *AB, interrupt_after=5)  # 2 setup + 3
    err = capsys.readouterr().err
    assert code == NOT_MET and "bootlab: cancelled" in err
    state = ABState.load(tmp_path / "ab-ab.json")
    before = dict(state.done)
    assert 0 < len(before) < 8 and rounds_on_one_board(state)
    started = sum(board.commands.count("boot") for board in boards)
    # both boards stopped at once: no boot began after the interrupt was handled
    time.sleep(0.5)
    assert sum(board.commands.count("boot") for board in boards) == started
    code, boards, _ = run_on_boards(ptys, tmp_path, *AB)
    out, err = capsys.readouterr()
    assert code == 0, err
    state = ABState.load(tmp_path / "ab-ab.json")
    assert state.finished and len(state.done) == 8
    # Kept as done, but for a boot in flight on each board when Ctrl-C came (its session
    # incomplete: booted again, by design).
    kept = sum(state.done.get(step) == name for step, name in before.items())
    assert kept >= len(before) - 2, (before, state.done)
    assert sum(board.commands.count("boot") for board in boards) == 8 - len(before)
    assert rounds_on_one_board(state)
    for name in {board for board, _ in per_board(state)}:
        assert per_board(state)[(name, "base")] == per_board(state)[(name, "quiet")]
    # The verdict of 4+4 fake boots on a loaded host is not what this test is about (the
    # wall-time test compares verdicts): the resumed run reports over both boards, blocked.
    assert "quiet: " in out and "on 2 boards, blocked" in out


class Failed(Exception):
    """A board's failure, planted."""


def test_a_failing_board_stops_the_other(ptys: list[Pty], tmp_path: Path) -> None:
    args = build_parser().parse_args([*AB, ptys[0].name, "--also-port", ptys[1].name,
                                      "--sessions", str(tmp_path), "--timeout", "20"])
    run = prepare_ab(args)
    assert not isinstance(run, int)
    sessions = open_boards(args, run.profile)
    assert not isinstance(sessions, int)
    boards = [FakeBoard(pair) for pair in ptys]
    for board in boards:
        board.power_on()
    events: list[object] = []
    failing = ptys[1].name

    def progress(event: object) -> None:
        events.append(event)
        if isinstance(event, BootStarting) and \
                sum(isinstance(e, BootStarting) and e.board == failing for e in events) == 2:
            raise Failed(f"{failing} broke")            # as its second boot starts

    try:
        with pytest.raises(Failed, match="broke"):
            abrun.run_ab([s.bench for s in sessions], run.state, run.settings,
                         lambda env: facts_from_log(None, env), run.options, progress)
        started = sum(board.commands.count("boot") for board in boards)
        time.sleep(0.5)
        assert sum(board.commands.count("boot") for board in boards) == started
    finally:
        close(sessions)
        for board in boards:
            board.power_off()
    assert [e.board for e in events if isinstance(e, BoardFailed)] == [failing]
    state = ABState.load(tmp_path / "ab-ab.json")
    assert 0 < len(state.done) < 8 and rounds_on_one_board(state)
    assert all(load_session(tmp_path / name).meta["ab"]["board"] == state.boards[step]
               for step, name in state.done.items())


def test_a_file_name_taken_meanwhile_by_another_board_is_not_reused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two boards start a boot of one variant within the same second: the name one recorder
    found free can be created by the other's before its own file is; it takes the next."""
    taken = tmp_path / "20260101-000000-quiet-01.jsonl"
    taken.write_text("the other board's boot\n")
    found = iter([taken])
    free = recorder.session_path
    monkeypatch.setattr(recorder, "session_path",
                        lambda folder, label: next(found, None) or free(folder, label))
    mine = Recorder(load_profile("linux"), tmp_path, {"label": "quiet"}, StopRule())
    mine.finish()
    assert mine.writer.path != taken and load_session(mine.writer.path).meta["label"] == "quiet"
    assert taken.read_text() == "the other board's boot\n"
