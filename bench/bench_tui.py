"""How does the app itself hold up? Prints figures beside their targets; asserts nothing.

    .venv/bin/python bench/bench_tui.py                     # 50,000 lines/s for 10 s
    .venv/bin/python bench/bench_tui.py --seconds 4 --keys 20 --starts 1     # a quick look
    .venv/bin/python bench/bench_tui.py --size 80x24 --screens 20 --screens-only

The real app runs as its own process, `python -m bootlab PORT`, in a real terminal: a pty of
120x40 (`--size`) whose output a thread here reads (and parses) the way a terminal emulator
would, so the figures include Textual's rendering and the bytes it writes. The board is a
second pty: this script writes the flood to its master, bootlab opens the slave as its serial
port. Every measurement is made on bootlab and then, in the same run, on the reference console
(`tui_reference.py`: Textual's own Log widget fed by a bare reader thread, recording and
matching nothing), and the table gives both and their ratio: on a shared machine the ratio
says more than either figure.

1. Flood: `--rate` lines/s (70-byte numbered lines) for `--seconds`, written on a fixed
   schedule. A pty never drops bytes: when the app reads too slowly the writes block, so the
   rate achieved is reported beside the target. After quitting the app (Ctrl-T q) bootlab's
   session file's received bytes are compared with every byte written. Screen behind the
   port: for the newest line number drawn in each frame, how long ago it was written.
2. Key to screen: Ctrl-T t (time column: the console's border title changes to the next mode)
   and Ctrl-T / (the search bar's placeholder appears), measured from writing the key to the
   terminal until the new text arrives in the app's output; `--keys` times each, idle, during
   the flood, and while a board talks at 115200 baud (70-byte lines, 11,520 bytes/s).
3. Memory: the app's VmRSS every 0.25 s; the console keeps 100,000 lines (the session file
   keeps everything), so RSS should stop growing once that many lines have arrived: the
   growth from then to the end of the flood is the figure, and what it exceeds the
   reference's growth by (Textual's and the allocator's share) is held to the target.
4. Time to first frame: from `Popen` until the console's border title is drawn, for
   `bootlab` (replaying the bundled example) and `bootlab PORT`; `--starts` runs of each.
5. Screen open and close: the help (Ctrl-T ?), the sessions screen (F2) and the command
   palette (Ctrl-T p), `--screens` times each, idle and during the flood (which then runs until
   they are done): from writing the key until the screen's own text is on the terminal's
   screen (open), then from writing Escape until that text is gone and the console's border
   title is back (close). Here the terminal's screen is modelled cell by cell (`ScreenModel`),
   since the console under a modal box goes on drawing its title. Escape is written as a
   terminal that speaks the kitty keyboard protocol sends it (CSI 27 u: Textual asks for the
   protocol and reads that at once); `--escape byte` writes the lone ESC byte of a legacy
   terminal (tmux), which Textual holds for its ESCDELAY (100 ms) to tell it from the start of
   a sequence, so every close then takes that longer (a smaller ESCDELAY does not help: the
   Linux driver looks at a pending ESC only when its 0.1 s wait for input runs out). The flood
   rate achieved while timing is printed too (a pty blocks a writer the app does not keep up
   with).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import fcntl
import json
import os
import pty
import re
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import tty
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAIN = Path(__file__).resolve().parent.parent
if str(MAIN) not in sys.path:
    sys.path.insert(0, str(MAIN))

from bootlab.core.capture.session import load_session  # noqa: E402

REFERENCE = Path(__file__).resolve().parent / "tui_reference.py"
SIZE = (120, 40)
SCROLLBACK = 100_000
"""The console's line cap (`LogView.max_lines`)."""
LINE_BYTES = 70
TICK_S = 0.01
FIRST_FRAME = "console · ".encode()
TITLES = {"elapsed": b"console \xc2\xb7 elapsed", "delta": b"console \xc2\xb7 delta",
          "clock": b"console \xc2\xb7 clock", "printk": b"console \xc2\xb7 printk"}
TITLE_ORDER = ["elapsed", "delta", "clock", "printk"]
SEARCH_OPEN = b"Enter finds"
CATCH_UP_S = 60.0
"""How long the last line may take to be drawn after the flood."""
WINDOW_BYTES = 1 << 20
"""Terminal output kept for searching (more is dropped from the front)."""
NUMBERED = re.compile(rb"flood (\d{8}) ")
ESC = b"\x14"
PACED_LINES_S = 115200 / 10 / LINE_BYTES
"""A 115200-baud console (8N1: 11,520 bytes/s) sending LINE_BYTES-byte lines back to back."""
TARGETS = {"flood_key_p95_ms": 100.0, "behind_p95_ms": 250.0, "rss_beyond_reference_mb": 1.0,
           "paced_key_p95_ms": 50.0}
"""Issue 15's targets: key to screen and screen behind the port under the flood (p95), memory
flat after the line cap, key to screen at 115200 baud (p95). Flat: RSS grows no more than the
reference's, which keeps nothing but Textual's `Log` (its own growth is the allocator's and
Textual's, ~1 MB), plus 1 MB."""
APPS = ("bootlab", "reference")
CONSOLE_TITLE = "console · "
ESCAPES = {"csi-u": b"\x1b[27u", "byte": b"\x1b"}
"""Escape as a kitty-protocol terminal sends it, and as a legacy one does."""
SETTLE_S = 0.15
"""Pause after a screen opened or closed before the next key."""
SCREEN_TARGETS = {"idle": 80.0, "flood": 150.0}
"""The responsiveness issue's targets for a screen's open + close round trip, p95 ms: idle,
and under the 50,000 lines/s flood."""


def flood_line(number: int) -> bytes:
    """One numbered line of LINE_BYTES bytes, CRLF included."""
    head = f"flood {number:08d} ".encode()
    return head + b"x" * (LINE_BYTES - len(head) - 2) + b"\r\n"


def raw_pty(size: tuple[int, int] | None = None) -> tuple[int, int]:
    """A pty pair in raw mode without echo (and with a window size for a terminal)."""
    master, slave = pty.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    if size is not None:
        columns, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    return master, slave


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for row in status:
                if row.startswith("VmRSS:"):
                    return int(row.split()[1])
    except OSError:
        return None
    return None


TOKEN = re.compile(
    r"\x1b\[([0-9;:<=>?]*)[ -/]*([@-~])"  # CSI: parameters, final byte
    r"|\x1b[\]P_^X][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, DCS ... up to BEL or ST
    r"|\x1b[()#][0-~]|\x1b[0-9:;<=>?@A-OQ-WYZ\\`a-~]"  # charsets, two-byte escapes
    r"|([^\x00-\x1f\x1b\x7f]+)"  # text
    r"|([\x00-\x1a\x1c-\x1f\x7f])")  # a control character
"""One piece of a terminal's output, whole (an escape sequence cut short does not match)."""


class ScreenModel:
    """What a terminal shows, cell by cell (characters only: colours are dropped).

    Enough of a terminal for what Textual writes: cursor moves, erasing, text, line feeds.
    """

    def __init__(self, size: tuple[int, int]) -> None:
        self.columns, self.rows = size
        self.cells = [[" "] * self.columns for _ in range(self.rows)]
        self.row = self.column = 0
        self._held = ""
        """The start of an escape sequence the next output completes."""
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode

    def feed(self, data: bytes) -> None:
        """Apply output to the screen."""
        text = self._held + self._decode(data)
        self._held = ""
        at, end = 0, len(text)
        while at < end:
            token = TOKEN.match(text, at)
            if token is None:  # an escape sequence cut short, or one no terminal knows
                if end - at < 256:
                    self._held = text[at:]
                    return
                at += 1  # not a sequence after all: drop the ESC
                continue
            at = token.end()
            params, final, printed, control = token.groups()
            if printed is not None:
                self._put(printed)
            elif final is not None:
                self._csi(params, final)
            elif control == "\n":
                self._line_feed()
            elif control == "\r":
                self.column = 0
            elif control == "\b":
                self.column = max(0, self.column - 1)

    def _put(self, text: str) -> None:
        for char in text:
            width = 2 if unicodedata.east_asian_width(char) in "WF" else 1
            if self.column + width > self.columns:  # autowrap
                self.column = 0
                self._line_feed()
            row = self.cells[self.row]
            row[self.column] = char
            if width == 2:
                row[self.column + 1] = ""
            self.column += width

    def _line_feed(self) -> None:
        if self.row == self.rows - 1:
            del self.cells[0]
            self.cells.append([" "] * self.columns)
        else:
            self.row += 1

    def _csi(self, params: str, final: str) -> None:
        if params.startswith(("?", ">", "<", "=")):
            return  # modes and queries: nothing drawn
        numbers = [int(n) if n.isdigit() else 0 for n in params.split(";")]
        first = numbers[0] or 1
        if final in "Hf":
            self.row = min(self.rows, first) - 1
            self.column = min(self.columns, (numbers[1] if len(numbers) > 1 else 0) or 1) - 1
        elif final in "ABCD":
            self.row = min(self.rows - 1, self.row + first) if final == "B" else \
                max(0, self.row - first) if final == "A" else self.row
            self.column = min(self.columns - 1, self.column + first) if final == "C" else \
                max(0, self.column - first) if final == "D" else self.column
        elif final == "G":
            self.column = min(self.columns, first) - 1
        elif final == "d":
            self.row = min(self.rows, first) - 1
        elif final == "J":
            mode = numbers[0]
            rows = range(self.rows) if mode >= 2 else range(self.row + 1, self.rows) \
                if mode == 0 else range(self.row)
            for row in rows:
                self.cells[row] = [" "] * self.columns
            if mode < 2:
                self._erase_line(mode)
        elif final == "K":
            self._erase_line(numbers[0])

    def _erase_line(self, mode: int) -> None:
        row = self.cells[self.row]
        start, stop = ((self.column, self.columns), (0, self.column + 1),
                       (0, self.columns))[min(mode, 2)]
        row[start:stop] = [" "] * (stop - start)

    def lines(self) -> list[str]:
        """Each row's text."""
        return ["".join(row) for row in self.cells]

    def shows(self, text: str) -> bool:
        """Whether a row holds `text`."""
        return any(text in line for line in self.lines())


@dataclass
class Terminal:
    """The app running in a pty terminal; a thread drains and scans what it draws."""

    argv: list[str]
    env: dict[str, str]
    size: tuple[int, int] = SIZE
    screen: ScreenModel | None = None
    """What the terminal shows, when it is modelled (`model_screen`)."""
    started: float = 0.0
    process: subprocess.Popen[bytes] | None = None
    newest_drawn: list[tuple[float, int]] = field(default_factory=list)
    """(time, highest flood line number in the output chunk) for every chunk showing one."""
    _window: bytearray = field(default_factory=bytearray)
    _searched: int = 0
    """How much of `_window` has been searched (only new output is searched again)."""
    _found: threading.Condition = field(default_factory=threading.Condition)
    _reader: threading.Thread | None = None
    _master: int = -1

    def start(self) -> None:
        self._master, slave = raw_pty(self.size)
        self.started = time.perf_counter()
        # Textual draws on stderr: all three are the terminal, as in a shell.
        self.process = subprocess.Popen(self.argv, stdin=slave, stdout=slave, stderr=slave,
                                        env=self.env, start_new_session=True, close_fds=True)
        os.close(slave)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:
                chunk = b""
            now = time.perf_counter()
            with self._found:
                if not chunk:
                    self._found.notify_all()
                    return
                self._window += chunk
                if self.screen is not None:
                    self.screen.feed(chunk)
                if len(self._window) > WINDOW_BYTES:  # keep the tail only
                    dropped = len(self._window) - WINDOW_BYTES // 2
                    del self._window[:dropped]
                    self._searched = max(0, self._searched - dropped)
                self._found.notify_all()
            numbers = NUMBERED.findall(chunk)
            if numbers:
                self.newest_drawn.append((now, max(int(n) for n in numbers)))

    def mark(self) -> None:
        """Forget the output so far: `wait_for` looks only at what comes next."""
        with self._found:
            self._window.clear()
            self._searched = 0

    def wait_for(self, text: bytes, timeout_s: float = 10.0) -> float | None:
        """The time `text` appeared in the output since `mark()`, or None."""
        found = self.wait_for_any([text], timeout_s)
        return None if found is None else found[0]

    def wait_for_any(self, texts: list[bytes], timeout_s: float = 10.0) \
            -> tuple[float, bytes] | None:
        """When one of `texts` appeared in the output since `mark()`, and which, or None."""
        deadline = time.perf_counter() + timeout_s
        longest = max(len(text) for text in texts)
        with self._found:
            while True:
                start = max(0, self._searched - longest)
                for text in texts:
                    if self._window.find(text, start) >= 0:
                        return time.perf_counter(), text
                self._searched = len(self._window)
                left = deadline - time.perf_counter()
                if left <= 0 or (self._reader is not None and not self._reader.is_alive()):
                    return None
                self._found.wait(left)

    def model_screen(self) -> None:
        """Model the screen from the output that follows (before the app starts: it draws
        everything once then)."""
        self.screen = ScreenModel(self.size)

    def wait_screen(self, shows: Callable[[ScreenModel], bool], timeout_s: float = 10.0) \
            -> float | None:
        """When the modelled screen came to satisfy `shows` (now, if it does), or None."""
        deadline = time.perf_counter() + timeout_s
        with self._found:
            while True:
                if self.screen is not None and shows(self.screen):
                    return time.perf_counter()
                left = deadline - time.perf_counter()
                if left <= 0 or (self._reader is not None and not self._reader.is_alive()):
                    return None
                self._found.wait(left)

    def press(self, keys: bytes) -> float:
        """Type keys into the terminal; returns when they were written."""
        self.mark()
        now = time.perf_counter()
        write_all(self._master, keys)
        return now

    def stop(self, keys: bytes = ESC + b"q", timeout_s: float = 30.0) -> int | None:
        """Quit the app with keys (SIGTERM if it does not go)."""
        assert self.process is not None
        with contextlib.suppress(OSError):
            write_all(self._master, keys)
        try:
            code = self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGTERM)
            code = self.process.wait(10)
        if self._reader is not None:
            self._reader.join(5)
        with contextlib.suppress(OSError):
            os.close(self._master)
        return code


def environment(config: Path) -> dict[str, str]:
    return {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor",
            "BOOTLAB_CONFIG_DIR": str(config), "BOOTLAB_LOCK_DIR": str(config)}


@contextlib.contextmanager
def live_app(work: Path, app: str = "bootlab", size: tuple[int, int] = SIZE,
             model: bool = False) -> Iterator[tuple[Terminal, int, Path]]:
    """`bootlab PORT` (or the reference console) on a fresh board pty, recording into
    `work/sessions`, in a terminal of `size` (whose screen is modelled if `model`)."""
    board_master, board_slave = raw_pty()
    sessions = work / "sessions"
    argv = [sys.executable, "-m", "bootlab", os.ttyname(board_slave), "--sessions",
            str(sessions)] if app == "bootlab" else \
        [sys.executable, str(REFERENCE), os.ttyname(board_slave)]
    term = Terminal(argv, environment(work), size)
    if model:
        term.model_screen()
    term.start()
    try:
        yield term, board_master, sessions
    finally:
        if term.process is not None and term.process.poll() is None:
            term.stop()
        for fd in (board_master, board_slave):
            with contextlib.suppress(OSError):
                os.close(fd)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary_ms(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": statistics.median(values) * 1e3,
            "p95": percentile(values, 0.95) * 1e3, "max": max(values) * 1e3}


class KeyTimer:
    """Times keys to screen: the time column (Ctrl-T t) and the search bar (Ctrl-T /)."""

    def __init__(self, term: Terminal) -> None:
        self.term = term
        self.mode = 0
        self.time_column: list[float] = []
        self.search_bar: list[float] = []
        self.missed = 0

    def time_column_once(self) -> None:
        # Any other title counts: a key lost on the way must not spoil the following ones.
        others = [TITLES[m] for i, m in enumerate(TITLE_ORDER) if i != self.mode]
        sent = self.term.press(ESC + b"t")
        seen = self.term.wait_for_any(others)
        if seen is None:
            self.missed += 1
        else:
            self.time_column.append(seen[0] - sent)
            self.mode = [TITLES[m] for m in TITLE_ORDER].index(seen[1])

    def search_bar_once(self) -> None:
        sent = self.term.press(ESC + b"/")
        seen = self.term.wait_for(SEARCH_OPEN)
        if seen is None:
            self.missed += 1
        else:
            self.search_bar.append(seen - sent)
        self.term.press(b"\x1b")  # Escape closes it, back to the console ...
        time.sleep(0.3)  # ... once Textual's ESCDELAY (100 ms) tells it from a sequence

    def both(self, count: int, until: Callable[[], bool] = lambda: False) -> None:
        for _ in range(count):
            if until():
                return
            self.time_column_once()
            if until():
                return
            self.search_bar_once()


def flood(board: int, rate: float, seconds: float, written: bytearray | None,
          marks: list[tuple[float, int]], stop: threading.Event | None = None) -> None:
    """Write `rate` lines/s for `seconds` (or until `stop`) on a fixed schedule (blocking when
    the app lags); what was written is added to `written` unless it is None."""
    per_tick = max(1, round(rate * TICK_S))
    total = int(rate * seconds)
    start = time.perf_counter()
    number = 0
    while number < total and not (stop is not None and stop.is_set()):
        due = start + number / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        chunk = b"".join(flood_line(n) for n in range(number, min(total, number + per_tick)))
        write_all(board, chunk)
        if written is not None:
            written += chunk
        number = min(total, number + per_tick)
        marks.append((time.perf_counter(), number - 1))


def session_bytes(sessions: Path) -> bytes:
    return b"".join(load_session(path).data for path in sorted(sessions.glob("*.jsonl")))


def run_paced(app: str, keys: int, size: tuple[int, int] = SIZE) -> dict[str, Any]:
    """Keys timed while the board talks at 115200 baud (the usual console)."""
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as folder, \
            live_app(Path(folder), app, size) as (term, board, _sessions):
        if term.wait_for(b"connected", 20) is None:
            raise SystemExit(f"bench_tui: {app} did not connect to the board pty")
        time.sleep(0.5)
        stop = threading.Event()
        writer = threading.Thread(target=flood, args=(board, PACED_LINES_S, 3600.0,
                                                      bytearray(), [], stop))
        writer.start()
        time.sleep(1.0)
        timer = KeyTimer(term)
        timer.both(keys)
        stop.set()
        writer.join()
    return {"time_column": summary_ms(timer.time_column),
            "search_bar": summary_ms(timer.search_bar),
            "keys": summary_ms(timer.time_column + timer.search_bar), "missed": timer.missed}


def run_flood(rate: int, seconds: float, keys: int, app: str = "bootlab",
              size: tuple[int, int] = SIZE) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as folder, \
            live_app(Path(folder), app, size) as (term, board, sessions):
        if term.wait_for(b"connected", 20) is None:
            raise SystemExit(f"bench_tui: {app} did not connect to the board pty")
        time.sleep(0.5)
        assert term.process is not None
        pid = term.process.pid
        idle = KeyTimer(term)
        idle.both(keys)
        rss: list[tuple[float, int]] = []
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.is_set():
                value = rss_kb(pid)
                if value is not None:
                    rss.append((time.perf_counter(), value))
                sampling.wait(0.25)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        written = bytearray()
        marks: list[tuple[float, int]] = []
        term.newest_drawn.clear()
        flood_start = time.perf_counter()
        writer = threading.Thread(target=flood, args=(board, rate, seconds, written, marks))
        writer.start()
        busy = KeyTimer(term)
        busy.both(keys, until=lambda: not writer.is_alive())
        writer.join()
        flood_end = marks[-1][0]  # the last write (a key being timed may end later)
        last = int(rate * seconds) - 1
        shown = last_drawn(term, last)
        caught_up_s = None if shown is None else shown - flood_end
        time.sleep(0.5)
        sampling.set()
        sampler.join()
        code = term.stop()
        recorded = session_bytes(sessions) if app == "bootlab" else bytes(written)
    lags = drawn_lags(term.newest_drawn, marks)
    # The cap is reached when the app holds its 100,000th line: when the screen first showed
    # it (the port had it earlier, by the app's lag behind it), else when it was written.
    cap_s = next((t for t, drawn in term.newest_drawn if drawn >= SCROLLBACK - 1),
                 flood_start + SCROLLBACK / rate)
    rss_at_cap = next((kb for t, kb in rss if t >= cap_s), None)
    rss_flood_end = next((kb for t, kb in rss if t >= flood_end), None)
    each_second = [next(kb for t, kb in rss if t >= cap_s + k) / 1024
                   for k in range(int(flood_end - cap_s) + 1) if rss and rss[-1][0] >= cap_s + k]
    identical = bytes(written) == recorded
    mismatch = None if identical else next(
        (i for i, (a, b) in enumerate(zip(written, recorded, strict=False)) if a != b),
        min(len(written), len(recorded)))
    return {
        "target_lines_s": rate, "seconds": seconds,
        "lines_written": last + 1, "bytes_written": len(written),
        "achieved_lines_s": (last + 1) / (flood_end - flood_start),
        "bytes_recorded": len(recorded),
        "missing_bytes": max(0, len(written) - len(recorded)),
        "identical": identical, "first_difference": mismatch,
        "caught_up_s": caught_up_s, "exit_code": code,
        "drawn_lag_ms": summary_ms(lags),
        "rss_mb": {"before": rss[0][1] / 1024 if rss else None,
                   "at_cap": None if rss_at_cap is None else rss_at_cap / 1024,
                   "peak": max(kb for _, kb in rss) / 1024 if rss else None,
                   "flood_end": None if rss_flood_end is None else rss_flood_end / 1024,
                   "end": rss[-1][1] / 1024 if rss else None,
                   "cap_after_s": cap_s - flood_start,
                   "each_second_after_cap": each_second},
        "keys_idle": {"time_column": summary_ms(idle.time_column),
                      "search_bar": summary_ms(idle.search_bar),
                      "keys": summary_ms(idle.time_column + idle.search_bar),
                      "missed": idle.missed},
        "keys_flood": {"time_column": summary_ms(busy.time_column),
                       "search_bar": summary_ms(busy.search_bar),
                       "keys": summary_ms(busy.time_column + busy.search_bar),
                       "missed": busy.missed},
    }


@dataclass(frozen=True)
class ScreenKey:
    """A screen (or dialog) the bench opens with `keys` and knows by `text`."""

    name: str
    keys: bytes
    text: str


SCREENS = (
    ScreenKey("help", ESC + b"?", "bootlab keys"),
    ScreenKey("sessions", b"\x1bOQ", "sessions in "),  # F2, as xterm sends it
    ScreenKey("palette", ESC + b"p", "Search for commands"),
)
"""The screens timed, each with its key in a live console and its own text (the help box's
and the palette's titles, the sessions screen's title line)."""
PHASES = ("open", "close", "round")


class ScreenTimer:
    """Times each screen's open (key to its text on screen) and close (Escape to the console
    back, the screen's text gone)."""

    def __init__(self, term: Terminal, escape: bytes) -> None:
        self.term = term
        self.escape = escape
        self.times: dict[str, dict[str, list[float]]] = {
            screen.name: {phase: [] for phase in PHASES} for screen in SCREENS}
        self.missed = 0

    def once(self, screen: ScreenKey) -> None:
        """Open the screen, close it, and note both times (and their sum)."""
        sent = self.term.press(screen.keys)
        opened = self.term.wait_screen(lambda shown: shown.shows(screen.text))
        time.sleep(SETTLE_S)
        closing = self.term.press(self.escape)
        closed = self.term.wait_screen(lambda shown: not shown.shows(screen.text)
                                       and shown.shows(CONSOLE_TITLE))
        time.sleep(SETTLE_S)
        if opened is None or closed is None:
            self.missed += 1
            return
        times = self.times[screen.name]
        times["open"].append(opened - sent)
        times["close"].append(closed - closing)
        times["round"].append(opened - sent + closed - closing)

    def each(self, count: int) -> None:
        """Every screen in turn, `count` times."""
        for _ in range(count):
            for screen in SCREENS:
                self.once(screen)

    def summary(self) -> dict[str, Any]:
        return {**{name: {phase: summary_ms(values) for phase, values in times.items()}
                   for name, times in self.times.items()}, "missed": self.missed}


def run_screens(app: str, rate: int, count: int, size: tuple[int, int],
                escape: bytes) -> dict[str, Any]:
    """Every screen opened and closed `count` times idle, then as many under a flood of `rate`
    lines/s that lasts until they are done."""
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as folder, \
            live_app(Path(folder), app, size, model=True) as (term, board, _sessions):
        if term.wait_for(b"connected", 20) is None:
            raise SystemExit(f"bench_tui: {app} did not connect to the board pty")
        time.sleep(0.5)
        idle = ScreenTimer(term, escape)
        idle.each(count)
        stop = threading.Event()
        marks: list[tuple[float, int]] = []
        writer = threading.Thread(target=flood, args=(board, rate, 3600.0, None, marks, stop))
        started = time.perf_counter()
        writer.start()
        time.sleep(1.0)
        busy = ScreenTimer(term, escape)
        busy.each(count)
        stop.set()
        writer.join()
    achieved = (marks[-1][1] + 1) / (marks[-1][0] - started) if marks else 0.0
    return {"idle": idle.summary(), "flood": {**busy.summary(), "achieved_lines_s": achieved}}


def last_drawn(term: Terminal, number: int) -> float | None:
    """When flood line `number` was first drawn (waiting up to CATCH_UP_S for it)."""
    deadline = time.perf_counter() + CATCH_UP_S
    while True:
        seen = next((t for t, drawn in list(term.newest_drawn) if drawn >= number), None)
        if seen is not None or time.perf_counter() > deadline:
            return seen
        time.sleep(0.05)


def drawn_lags(drawn: list[tuple[float, int]], marks: list[tuple[float, int]]) -> list[float]:
    """For each frame that shows a newer flood line than any before: when it was drawn minus
    when that line was written."""
    lags = []
    index, newest = 0, -1
    for t, number in drawn:
        if number <= newest:
            continue
        newest = number
        while index < len(marks) and marks[index][1] < number:
            index += 1
        if index < len(marks):
            lags.append(max(0.0, t - marks[index][0]))
    return lags


def first_frames(starts: int, size: tuple[int, int] = SIZE) -> dict[str, dict[str, float | int]]:
    figures: dict[str, list[float]] = {"replay": [], "live": []}
    for _ in range(starts):
        with tempfile.TemporaryDirectory(prefix="bench-tui-") as folder:
            term = Terminal([sys.executable, "-m", "bootlab"], environment(Path(folder)), size)
            term.start()
            seen = term.wait_for(FIRST_FRAME, 30)
            term.stop()
            if seen is not None:
                figures["replay"].append(seen - term.started)
            with live_app(Path(folder), size=size) as (live, _board, _sessions):
                seen = live.wait_for(FIRST_FRAME, 30)
                if seen is not None:
                    figures["live"].append(seen - live.started)
    return {name: summary_ms(values) for name, values in figures.items()}


def _ms(summary: dict[str, float | int], key: str = "p95") -> float | None:
    return float(summary[key]) if summary.get("n") else None


def figures(run: dict[str, Any]) -> dict[str, float | None]:
    """The targeted figures (and a few beside them) of one app's runs."""
    f, paced = run["flood"], run["paced"]
    rss = f["rss_mb"]
    growth = None if rss["at_cap"] is None else rss["peak"] - rss["at_cap"]
    return {
        "achieved_lines_s": f["achieved_lines_s"],
        "flood_key_p95_ms": _ms(f["keys_flood"]["keys"]),
        "flood_key_p50_ms": _ms(f["keys_flood"]["keys"], "p50"),
        "behind_p95_ms": _ms(f["drawn_lag_ms"]),
        "behind_p50_ms": _ms(f["drawn_lag_ms"], "p50"),
        "rss_growth_mb": growth,
        "paced_key_p95_ms": _ms(paced["keys"]),
        "paced_key_p50_ms": _ms(paced["keys"], "p50"),
        "idle_key_p95_ms": _ms(f["keys_idle"]["keys"]),
        "caught_up_ms": None if f["caught_up_s"] is None else f["caught_up_s"] * 1e3,
    }


ROWS = [
    ("flood achieved, lines/s (target 50,000)", "achieved_lines_s", None, "{:,.0f}"),
    ("key→screen p95 ms, flooding", "flood_key_p95_ms", "flood_key_p95_ms", "{:.0f}"),
    ("key→screen p50 ms, flooding", "flood_key_p50_ms", None, "{:.0f}"),
    ("screen behind the port p95 ms", "behind_p95_ms", "behind_p95_ms", "{:.0f}"),
    ("screen behind the port p50 ms", "behind_p50_ms", None, "{:.0f}"),
    ("last line drawn, ms after the last write", "caught_up_ms", None, "{:.0f}"),
    ("RSS growth after the 100k-line cap, MB", "rss_growth_mb", None, "{:.1f}"),
    ("  the same, beyond the reference's, MB", "rss_beyond_reference_mb",
     "rss_beyond_reference_mb", "{:+.1f}"),
    ("key→screen p95 ms, 115200 baud", "paced_key_p95_ms", "paced_key_p95_ms", "{:.0f}"),
    ("key→screen p50 ms, 115200 baud", "paced_key_p50_ms", None, "{:.0f}"),
    ("key→screen p95 ms, idle", "idle_key_p95_ms", None, "{:.0f}"),
]


def table(result: dict[str, Any]) -> str:
    """The figures of both apps side by side, with the ratio and the target."""
    ours, ref = figures(result["bootlab"]), figures(result["reference"])
    ours["rss_beyond_reference_mb"] = ref["rss_beyond_reference_mb"] = None
    if ours["rss_growth_mb"] is not None and ref["rss_growth_mb"] is not None:
        ours["rss_beyond_reference_mb"] = ours["rss_growth_mb"] - ref["rss_growth_mb"]

    def cell(value: float | None, form: str) -> str:
        return "-" if value is None else form.format(value)

    header = ("figure", "bootlab", "reference", "ratio", "target", "met")
    rows = [header]
    for name, key, target, form in ROWS:
        a, b = ours[key], ref[key]
        ratio = "-" if a is None or not b else f"{a / b:.2f}"
        goal = TARGETS.get(target or "")
        met = "-" if goal is None or a is None else ("yes" if a <= goal else "NO")
        rows.append((name, cell(a, form), cell(b, form), ratio,
                     "-" if goal is None else f"≤ {goal:g}", met))
    f = result["bootlab"]["flood"]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    starts = result["first_frame"]
    lines += [
        "",
        f"flood: {f['target_lines_s']:,} lines/s x {f['seconds']:g} s ({f['lines_written']:,} "
        f"lines, {f['bytes_written']:,} bytes); bootlab's session file: "
        f"{f['bytes_recorded']:,} bytes, missing {f['missing_bytes']:,}, identical: "
        f"{f['identical']}",
        "RSS MB before / at 100k lines / peak / end of flood, bootlab: " + " / ".join(
            "-" if f["rss_mb"][k] is None else f"{f['rss_mb'][k]:.1f}"
            for k in ("before", "at_cap", "peak", "flood_end")),
        "the cap (line 100,000 first on screen), s after the flood began, bootlab / reference: "
        + " / ".join(f"{result[app]['flood']['rss_mb']['cap_after_s']:.2f}" for app in APPS),
        "RSS MB each second from the cap on, bootlab / reference: " + " / ".join(
            " ".join(f"{mb:.1f}" for mb in result[app]["flood"]["rss_mb"]["each_second_after_cap"])
            for app in APPS),
        "keys not drawn within 10 s (idle, flooding, 115200): " + ", ".join(
            f"{app} {result[app]['flood']['keys_idle']['missed']}/"
            f"{result[app]['flood']['keys_flood']['missed']}/{result[app]['paced']['missed']}"
            for app in APPS),
        f"machine load (1-min average): {result['load']:.1f} on {os.cpu_count()} cores",
    ]
    for name in ("replay", "live"):
        s = starts[name]
        lines.append(f"first frame ms p50/max, `bootlab{' PORT' if name == 'live' else ''}`: "
                     + ("-" if not s["n"] else f"{s['p50']:.0f} / {s['max']:.0f} (n={s['n']})"))
    return "\n".join(lines)


def screens_table(result: dict[str, Any]) -> str:
    """Each screen's open, close and round trip, idle and flooding, for both apps, with the
    targets (held to the round trip's p95)."""
    header = ("screen", "when", "time", "bootlab p50", "p95", "reference p50", "p95",
              "ratio p95", "target p95", "met")
    rows: list[tuple[str, ...]] = [header]
    for screen in SCREENS:
        for when in ("idle", "flood"):
            for phase in PHASES:
                ours = result["bootlab"]["screens"][when][screen.name][phase]
                ref = result["reference"]["screens"][when][screen.name][phase]
                cells = [_ms(ours, "p50"), _ms(ours), _ms(ref, "p50"), _ms(ref)]
                a, b = cells[1], cells[3]
                goal = SCREEN_TARGETS[when] if phase == "round" else None
                rows.append((screen.name, when, "open+close" if phase == "round" else phase,
                             *("-" if v is None else f"{v:.0f}" for v in cells),
                             "-" if a is None or not b else f"{a / b:.2f}",
                             "-" if goal is None else f"≤ {goal:g}",
                             "-" if goal is None or a is None
                             else "PASS" if a <= goal else "FAIL"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    size = "x".join(map(str, result["size"]))
    lines += [
        "",
        f"terminal {size}; {result['screens']} times each screen, idle and under "
        f"{result['rate']:,} lines/s; Escape written as {result['escape']}",
        "flood achieved while the screens were timed, lines/s: " + ", ".join(
            f"{app} {result[app]['screens']['flood']['achieved_lines_s']:,.0f}" for app in APPS),
        "screens not opened or closed within 10 s (idle/flooding): " + ", ".join(
            f"{app} {result[app]['screens']['idle']['missed']}/"
            f"{result[app]['screens']['flood']['missed']}" for app in APPS),
        f"machine load (1-min average) before / after the run: {result['load_before']:.1f} / "
        f"{result['load_after']:.1f} on {os.cpu_count()} cores (after: the bench's own included)",
    ]
    return "\n".join(lines)


def terminal_size(text: str) -> tuple[int, int]:
    """`80x24` as (80, 24)."""
    columns, _, rows = text.partition("x")
    try:
        return int(columns), int(rows)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give COLUMNSxROWS, e.g. 80x24") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=int, default=50_000, help="lines/s (default 50,000)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--keys", type=int, default=100,
                        help="presses of each timed key, idle, flooding and at 115200 baud")
    parser.add_argument("--starts", type=int, default=5, help="app starts timed per mode")
    parser.add_argument("--screens", type=int, default=20,
                        help="opens and closes of each screen, idle and flooding (0: none)")
    parser.add_argument("--screens-only", action="store_true",
                        help="time the screens only (no flood figures, keys or starts)")
    parser.add_argument("--escape", choices=sorted(ESCAPES), default="csi-u",
                        help="how Escape is written: CSI 27 u (kitty protocol, the default) or "
                             "the lone byte (legacy terminals; Textual waits ESCDELAY for more)")
    parser.add_argument("--size", type=terminal_size, default=SIZE,
                        help=f"the terminal, COLUMNSxROWS (default {SIZE[0]}x{SIZE[1]})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result: dict[str, Any] = {app: {} for app in APPS}
    result.update(size=args.size, rate=args.rate, screens=args.screens, escape=args.escape)
    if not args.screens_only:
        for app in APPS:  # one app after the other per measurement: the load drifts less
            result[app]["flood"] = run_flood(args.rate, args.seconds, args.keys, app, args.size)
        for app in APPS:
            result[app]["paced"] = run_paced(app, args.keys, args.size)
        result["first_frame"] = first_frames(args.starts, args.size)
    if args.screens:
        for app in APPS:
            result[app]["screens"] = run_screens(app, args.rate, args.screens, args.size,
                                                 ESCAPES[args.escape])
    result["load"] = max(load, os.getloadavg()[0])
    result.update(load_before=load, load_after=os.getloadavg()[0])
    if args.json:
        print(json.dumps(result, indent=2))
        return
    tables = [] if args.screens_only else [table(result)]
    if args.screens:
        tables.append(screens_table(result))
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
