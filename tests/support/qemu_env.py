"""The QEMU board's U-Boot environment as its `printenv` printed it (tests/data), and the kernel
command line its bootargs give."""

from __future__ import annotations

from bootlab.core.board.hush import parse_printenv
from support.paths import ROOT

PRINTENV = (ROOT / "tests" / "data" / "printenv-qemu.txt").read_text(encoding="latin-1")
"""The output of a bare `printenv` at the board's prompt, command echo and size line included."""
QEMU_ENV = parse_printenv(PRINTENV)
QEMU_ARGS = "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait"
