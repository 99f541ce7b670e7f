"""A console to talk to a board through: send paced input, wait for patterns, record it all.

Everything received is in the Recorder before the console sees it (its link records each read,
through the session's one port loop, `bootlab.session.portloop`), then goes into a window of
recent text the waits search in. Everything sent is recorded here; input typed at a password
prompt is stored redacted.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from bootlab.core.capture.redaction import SecretInput
from bootlab.core.capture.text import clean
from bootlab.core.recording.recorder import Recorder


class Link(Protocol):
    """Where bytes come from and go to (a serial port, a socket, a pty)."""

    def chunks(self, recorder: Recorder, poll_s: float) -> Iterator[tuple[bytes, int]]:
        """(data, CLOCK_MONOTONIC ns) as reads arrive, each taken into `recorder` first (gaps
        and reconnections too); (b"", now) every poll_s while idle."""
        ...

    def write(self, data: bytes) -> None:
        """Send bytes."""
        ...


PROMPT_QUIET_S = 0.3
"""Seconds of silence after a prompt-like match before it is taken as a prompt."""


class ConsoleTimeout(Exception):
    """What was awaited did not come; the message says what and shows the last output."""


class Stopped(Exception):
    """The console was stopped from another thread (`Console.stop`): another board of the run
    failed, or the run was cancelled."""


@dataclass(frozen=True)
class Found:
    """A pattern found in the output."""

    pattern: re.Pattern[str]
    match: re.Match[str]
    before: str
    """Cleaned output between the start of the wait and the match."""
    t_ns: int
    """When the read that completed the match arrived."""


class Console:
    """Paced input, pattern waits, and a recording of both directions."""

    def __init__(self, link: Link, recorder: Recorder, pace_s: float = 0.01,
                 poll_s: float = 0.02) -> None:
        self.link = link
        self.recorder = recorder
        self.pace_s = pace_s
        self._chunks = link.chunks(recorder, poll_s)
        self._raw = bytearray()
        self._mark = 0
        self.secrets = SecretInput()
        """Which typed input is a password, recorded as its length only."""
        self.stop = threading.Event()
        """Set from another thread: the next read or wait raises `Stopped` (cleared to use the
        console again)."""

    def _pump(self) -> int:
        if self.stop.is_set():
            raise Stopped("stopped")
        data, t_ns = next(self._chunks)
        if data:
            self._raw += data
            if len(self._raw) > 1 << 20:  # keep a window: the recording has everything
                cut = len(self._raw) - (1 << 19)
                del self._raw[:cut]
                self._mark = max(0, self._mark - cut)
        return t_ns

    def text(self) -> str:
        """Cleaned output since the last `mark()`, line by line as a terminal shows it."""
        return "\n".join(clean(line) for line in bytes(self._raw[self._mark:]).split(b"\n"))

    def mark(self) -> None:
        """Forget output so far: later waits only look at what comes next."""
        self._mark = len(self._raw)

    def expect(self, patterns: list[re.Pattern[str]], timeout: float, what: str) -> Found:
        """Wait until one of the patterns appears in the output since the last mark.

        Raises:
            ConsoleTimeout: none appeared within `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            t_ns = self._pump()
            text = self.text()
            for pattern in patterns:
                found = pattern.search(text)
                if found is not None:
                    self._mark += len(_encoded_prefix(self._raw[self._mark:], text, found.end()))
                    return Found(pattern, found, text[:found.start()], t_ns)
            if time.monotonic() > deadline:
                tail = text[-300:].replace("\n", " | ")
                raise ConsoleTimeout(f"no {what} within {timeout:.0f} s; last output: {tail!r}")

    def expect_prompt(self, patterns: list[re.Pattern[str]], timeout: float, what: str,
                      quiet_s: float = PROMPT_QUIET_S) -> Found:
        """Wait for a prompt: a match that nothing follows for `quiet_s` (a prompt waits for
        input). Output still streaming can end in what looks like one for a moment: a kernel
        line read up to `... 2.40) #` matches a shell prompt's `#` until its `1 SMP` arrives.

        Raises:
            ConsoleTimeout: no such prompt within `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            found = self.expect(patterns, max(deadline - time.monotonic(), 0.0), what)
            size = seen = len(self._raw)
            until = time.monotonic() + quiet_s
            while time.monotonic() < until:
                self._pump()
                if len(self._raw) != seen:  # a prompt's own tail (`login:` then its space,
                    seen = len(self._raw)   # sent in a later read) is no output after it
                    if bytes(self._raw[size:]).strip():
                        break
                    until = time.monotonic() + quiet_s
            if not bytes(self._raw[size:]).strip():
                return found

    def settle(self, patterns: list[re.Pattern[str]], quiet_s: float, timeout: float,
               what: str) -> Found | None:
        """Wait for one of the patterns (as `expect` does) while output keeps coming; None once
        nothing has arrived for `quiet_s` seconds, or after `timeout`."""
        deadline = time.monotonic() + timeout
        size, since = len(self._raw), time.monotonic()
        while time.monotonic() < deadline:
            try:
                return self.expect(patterns, min(0.25, quiet_s), what)
            except ConsoleTimeout:
                pass
            if len(self._raw) != size:
                size, since = len(self._raw), time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return None
        return None

    def drain(self, seconds: float) -> None:
        """Keep recording for a while without waiting for anything."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._pump()

    def send(self, text: str, paced: bool = True) -> None:
        """Type text, one character at a time when paced (U-Boot drops fast input)."""
        data = text.encode()
        last_line = clean(bytes(self._raw[-256:]).rsplit(b"\n", 1)[-1])
        secret = self.secrets.typed(last_line, data)
        pieces = [data[i:i + 1] for i in range(len(data))] if paced and self.pace_s else [data]
        for piece in pieces:
            self.link.write(piece)
            self.recorder.writer.tx(piece, time.monotonic_ns() - self.recorder.writer.start_ns,
                                    secret=secret)
            if paced and self.pace_s:
                end = time.monotonic() + self.pace_s
                while time.monotonic() < end:
                    self._pump()


def _encoded_prefix(raw: bytearray, text: str, end: int) -> bytes:
    """The raw bytes up to the line holding text position `end` (waits resume after it)."""
    lines_before = text.count("\n", 0, end)
    position = 0
    for _ in range(lines_before):
        nl = raw.find(b"\n", position)
        if nl < 0:
            return bytes(raw)
        position = nl + 1
    # Within the matched line: resume after it only if it is complete; a prompt stays
    # unconsumed up to its end, so the next wait starts after the prompt.
    nl = raw.find(b"\n", position)
    return bytes(raw[: (nl + 1) if nl >= 0 else len(raw)])
