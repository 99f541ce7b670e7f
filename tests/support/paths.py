"""Where things are, relative to the repository: the bundled sessions, the QEMU board, and how
to run bootlab in a subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root."""
EXAMPLES = ROOT / "examples"
BOOTLAB = [sys.executable, "-m", "bootlab"]
LAB = ROOT.parent / "shared" / "lab"
"""The QEMU board's sources and scripts (beside the repository)."""
BOARD_OUT = Path(os.environ.get("BOARD_OUT", ROOT / ".lab" / "board"))
"""Where the QEMU board is built."""
LAB3 = ROOT.parent / "shared" / "lab3"
"""Board #3's sources and scripts: x86, U-Boot, GRUB, extlinux.conf on ext4, systemd."""
LAB3_OUT = Path(os.environ.get("LAB3_OUT", ROOT / ".lab" / "lab3"))
"""Where board #3 is built."""


def example_sessions(label: str | None = None) -> list[Path]:
    """The bundled example sessions (optionally those with one label)."""
    paths = sorted(EXAMPLES.glob("*.jsonl"))
    return [p for p in paths if label is None or f"-{label}-" in p.name]
