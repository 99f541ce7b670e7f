"""`bootlab` with no command and `bootlab PORT`: the app on a terminal, plain output elsewhere."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from bootlab import cli
from bootlab.ui import launch


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def pretend_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stdin and stdout are terminals (set in the test: pytest swaps stdout between phases)."""
    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr("sys.stdout", Terminal())


def live_calls(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """Record the arguments `bootlab PORT` would open the app with."""
    seen: list[argparse.Namespace] = []

    def run_live(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(launch, "run_live", run_live)
    return seen


def test_no_command_on_a_terminal_opens_the_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    pretend_terminal(monkeypatch)
    calls: list[Path | None] = []

    def run_examples(sessions: Path | None = None) -> int:
        calls.append(sessions)
        return 0

    monkeypatch.setattr(launch, "run_examples", run_examples)
    assert cli.main([]) == 0 and calls == [None]
    assert cli.main(["--sessions", "bench-sessions"]) == 0
    assert calls[-1] == Path("bench-sessions")


def test_no_command_in_a_pipe_prints_the_comparison(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "default" in out and "quiet" in out and "bootdelay0" in out


def test_a_port_on_a_terminal_opens_the_live_app(monkeypatch: pytest.MonkeyPatch) -> None:
    pretend_terminal(monkeypatch)
    seen = live_calls(monkeypatch)
    assert cli.main(["/dev/ttyUSB7", "--baud", "921600", "--label", "quiet",
                     "--board", "bbb"]) == 0
    [args] = seen
    assert (args.port, args.baud, args.label, args.board, args.sessions) == \
        ("/dev/ttyUSB7", 921600, "quiet", "bbb", None)


def test_a_url_is_a_port_too(monkeypatch: pytest.MonkeyPatch) -> None:
    pretend_terminal(monkeypatch)
    seen = live_calls(monkeypatch)
    assert cli.main(["socket://127.0.0.1:5555"]) == 0 and seen[0].baud == 115200


def test_a_port_without_a_terminal_points_to_record(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["/dev/ttyUSB7"]) == cli.BAD_INPUT
    assert "bootlab record /dev/ttyUSB7" in capsys.readouterr().err


def test_a_mistyped_command_is_not_taken_for_a_port(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["analyse", "x.log"]) == cli.BAD_INPUT
    assert "neither a command nor a port" in capsys.readouterr().err


def test_help_tells_about_the_app_and_compare(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "bootlab compare examples/*.jsonl" in text and "bootlab PORT" in text
