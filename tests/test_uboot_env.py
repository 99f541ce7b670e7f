"""The U-Boot environment read through board control (`UBoot.printenv`) from the fake U-Boot on
a pty: a script variable over several lines and values with backslashes come back exactly as
they are stored (`hush.parse_printenv`, the one printenv parser)."""

from __future__ import annotations

from pathlib import Path

from support.fake_board import DEFAULT_ENV, FakeBoard
from support.pty_pair import Pty

from bootlab.control.board_console import Console
from bootlab.control.uboot import UBoot
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.recording.recorder import Recorder, StopRule
from bootlab.session.portlink import PortLink

ENV = {**DEFAULT_ENV,
       "bootscript": "if test -e mmc 0 boot.scr; then\n  source ${scriptaddr}\nfi",
       "dospath": "C:\\boot\\",
       "pattern": "a\\\\nb"}
"""Escaped by `printenv`: newlines, a trailing backslash, a backslash before an `n`."""


def test_multi_line_and_backslashed_values_are_read_exactly(pty_pair: Pty,
                                                            tmp_path: Path) -> None:
    board = FakeBoard(pty_pair, env=ENV)
    link = PortLink(pty_pair.name, 115200)
    recorder = Recorder(load_profile("linux"), tmp_path, {"label": "env"}, StopRule(),
                        auto_split=False)
    uboot = UBoot(Console(link, recorder, pace_s=0.001))
    board.power_on()
    try:
        uboot.interrupt(timeout=20)
        env = uboot.printenv()
    finally:
        board.power_off()
        recorder.finish()
        link.close()
    assert env == ENV
    assert env["bootscript"].splitlines() == ["if test -e mmc 0 boot.scr; then",
                                              "  source ${scriptaddr}", "fi"]
