"""Board 3's real cold boot (`../shared/lab3/example-cold-boot.log`) as a session: each line
of the log is seconds since power-on then the bytes as sent (colours and the console's cuts
included)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bootlab.core.capture.session import SessionWriter
from support.paths import LAB3

COLD_BOOT = LAB3 / "example-cold-boot.log"


def lab3_session(folder: Path) -> Path:
    """The cold boot written as a session in `folder` (skips when board 3 is not there)."""
    if not COLD_BOOT.is_file():
        pytest.skip(f"board 3's example log is not in {LAB3}")
    path = folder / "lab3.jsonl"
    writer = SessionWriter(path, {"label": "lab3", "profile": "linux"}, start_ns=0)
    for raw in COLD_BOOT.read_bytes().split(b"\n"):
        if found := re.match(rb"^\s*(\d+\.\d+) ?(.*)$", raw):
            writer.rx(found.group(2) + b"\r\n", int(float(found.group(1)) * 1e9))
    writer.close(int(40e9))
    return path
