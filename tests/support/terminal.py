"""A real terminal for the app: a program run on a pty whose every output byte is kept, and a
scanner for the device attacks that must never reach a terminal."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Sequence

# Device payloads: each would act on the terminal it reached. Markers make them recognisable
# even where the app itself uses the same kind of sequence.
ATTACKS: dict[str, bytes] = {
    "OSC 52 clipboard write": b"\x1b]52;c;UFdORUQtQ0xJUA==\x07",
    "OSC 52, ST-terminated": b"\x1b]52;p;UFdORUQtU1Q=\x1b\\",
    "OSC 0 title": b"\x1b]0;PWNED-TITLE0\x07",
    "OSC 2 title": b"\x1b]2;PWNED-TITLE2\x1b\\",
    "OSC 8 hyperlink": b"\x1b]8;;http://pwned.example/\x07link\x1b]8;;\x07",
    "DCS (DECRQSS)": b"\x1bP$qPWNED-DCS\x1b\\",
    "APC (kitty graphics)": b"\x1b_GPWNED-APC\x1b\\",
    "PM": b"\x1b^PWNED-PM\x1b\\",
    "SOS": b"\x1bXPWNED-SOS\x1b\\",
    "CSI clear screen + home": b"\x1b[2J\x1b[3J\x1b[H",
    "CSI cursor report request": b"\x1b[6n",
    "CSI window title report": b"\x1b[21t",
    "CSI window resize": b"\x1b[8;5;5t",
    "DEC alternate screen off": b"\x1b[?1049l\x1b[?47l",
    "DEC mouse reporting": b"\x1b[?1000l\x1b[?1003l\x1b[?9h",
    "DEC bracketed paste off": b"\x1b[?2004l",
    "DEC cursor keys mode": b"\x1b[?1h",
    "full reset (RIS)": b"\x1bc",
    "DEC line drawing charset": b"\x1b(0",
    "DEC screen alignment": b"\x1b#8",
    "8-bit CSI": b"\x9b2J\x9b?1049l",
    "8-bit OSC": b"\x9d52;c;UFdORUQtQzE=\x07\x9d0;PWNED-C1TITLE\x9c",
    "8-bit DCS": b"\x90$qPWNED-C1DCS\x9c",
    "8-bit APC": b"\x9fPWNED-C1APC\x9c",
    "UTF-8 CSI": "\u009b2J\u009b?1049l".encode(),
    "UTF-8 OSC": "\u009d52;c;UFdORUQtVTg=\u0007\u009d2;PWNED-U8TITLE\u009c".encode(),
    "UTF-8 DCS": "\u0090$qPWNED-U8DCS\u009c".encode(),
    "UTF-8 APC": "\u009fPWNED-U8APC\u009c".encode(),
    "NEL/IND/RI C1": "\u0085\u0084\u008d".encode() + b"\x85\x84\x8d",
}
PAYLOAD = b"".join(b"before " + attack + b" after\r\n" for attack in ATTACKS.values())

_FORBIDDEN = [
    (re.compile(rb"\x1b\][^\x07\x1b]*(?:PWNED|UFdORUQ|pwned)"), "an OSC string from the device"),
    (re.compile(rb"\x1b\]52;"), "an OSC 52 clipboard write"),
    (re.compile(rb"\x1b[P_^X][^\x1b]*PWNED"), "a DCS/APC/PM/SOS string from the device"),
    (re.compile(rb"\x1b\[[0-9;]*[nt]"), "a report or window request (CSI n/t)"),
    (re.compile(rb"\x1b\[\?(?:1049|47|1000|1003|2004)l|\x1b\[\?(?:9|1)h"),
     "a DEC private mode change"),
    (re.compile(rb"\x1bc|\x1b\(0|\x1b#8"), "a reset, charset or alignment sequence"),
    (re.compile(rb"\x1b\[3J"), "a scrollback erase"),
]


def findings(output: bytes) -> list[str]:
    """What in `output` a device could have slipped to the terminal (empty: nothing)."""
    found = [f"{what}: {m.group(0)[:40]!r}" for pattern, what in _FORBIDDEN
             for m in [pattern.search(output)] if m]
    # Raw bytes 0x80-0x9f outside UTF-8 (as surrogate escapes) act on 8-bit terminals; U+0080-
    # U+009F (as UTF-8) on UTF-8 terminals that honour C1 controls.
    text = output.decode("utf-8", "surrogateescape")
    raw = sorted({f"0x{ord(ch) - 0xDC00:02x}" for ch in text if 0xDC80 <= ord(ch) <= 0xDC9F})
    c1 = sorted({f"U+{ord(ch):04X}" for ch in text if 0x80 <= ord(ch) <= 0x9F})
    if raw:
        found.append(f"raw C1 bytes {', '.join(raw)}")
    if c1:
        found.append(f"C1 control code points {', '.join(c1)}")
    return found


class Terminal:
    """A program on a pty of a given size; everything it writes is kept in `output`."""

    def __init__(self, argv: Sequence[str], size: tuple[int, int] = (100, 30),
                 env: dict[str, str] | None = None) -> None:
        self.master, slave = os.openpty()
        columns, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            list(argv), stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
            env={**os.environ, "TERM": "xterm-256color", **(env or {})})
        os.close(slave)
        self.output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.output += data

    def snapshot(self) -> bytes:
        """Everything written so far."""
        with self._lock:
            return bytes(self.output)

    def wait_for(self, needle: bytes, timeout_s: float = 60.0) -> bytes:
        """Wait until `needle` has been written; return the output so far."""
        deadline = time.monotonic() + timeout_s
        while needle not in self.snapshot():
            if time.monotonic() > deadline or self.process.poll() is not None:
                tail = self.snapshot()[-2000:]
                raise AssertionError(f"{needle!r} never appeared; last output: {tail!r}")
            time.sleep(0.05)
        return self.snapshot()

    def type(self, data: bytes) -> None:
        """Keys typed at the terminal."""
        os.write(self.master, data)

    def close(self, timeout_s: float = 20.0) -> int:
        """Wait for the program to end (killing it after `timeout_s`); its exit code."""
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()
        finally:
            self._reader.join(2)
            os.close(self.master)
