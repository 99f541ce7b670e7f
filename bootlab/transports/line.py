"""How a serial line is framed and driven: `SerialLine` (no pyserial import: the options that make
one are read before any port is opened, and `record`'s start-up stays light)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

PARITIES = {"none": "N", "even": "E", "odd": "O", "mark": "M", "space": "S"}
"""Parity names and pyserial's letters for them."""


@dataclass(frozen=True)
class SerialLine:
    """How the serial line is framed and driven, as a terminal's options set it (picocom's,
    tio's): data bits, parity, stop bits, flow control, and the modem lines at open (None:
    as the driver leaves them). Network ports take what their protocol carries (RFC 2217
    sends them on), a raw socket none."""

    data_bits: int = 8
    parity: str = "none"
    stop_bits: float = 1
    flow: str = "none"
    dtr: bool | None = None
    rts: bool | None = None

    def apply(self, port: Any) -> None:
        """Set the framing and flow control on a pyserial port before it opens."""
        port.bytesize = self.data_bits
        port.parity = PARITIES[self.parity]
        port.stopbits = self.stop_bits
        port.rtscts = self.flow == "rtscts"
        port.xonxoff = self.flow == "xonxoff"
        if self.dtr is not None:
            port.dtr = self.dtr
        if self.rts is not None:
            port.rts = self.rts


def line_of(args: argparse.Namespace) -> SerialLine:
    """The serial line the options ask for."""
    return SerialLine(args.data_bits, args.parity, args.stop_bits, args.flow, args.dtr, args.rts)

