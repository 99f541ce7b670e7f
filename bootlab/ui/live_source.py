"""A live port for the app: the stamping reader, recorded into session files, in batches.

This is the one module of the UI that knows the reader's API. `run` (on a worker thread)
opens the port, records every read into a session file per boot (`Recorder`, the same as
`bootlab record`) and posts batches of lines; `send` (on the UI thread) writes typed keys at
once and queues them for the session, which only the worker thread writes.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from textual.message import Message

from bootlab.core.profiles import Profile
from bootlab.core.recording import Recorder, StopRule
from bootlab.transports.errors import PortError
from bootlab.transports.reader import (
    Chunk,
    Gap,
    Idle,
    Reconnected,
    StampingReader,
    default_reconnect,
)
from bootlab.ui.feed import BATCH_S, Batcher, Post
from bootlab.ui.messages import PortBack, PortLost, PortOpened, SourceFailed

CLOSE_WAIT_S = 5.0
"""How long `wait_closed` waits for the session to be flushed and closed."""


class LiveLink:
    """A serial port or URL read on a worker thread into session files."""

    live = True

    def __init__(self, url: str, baud: int, profile: Profile, folder: Path,
                 meta: dict[str, object]) -> None:
        self.url = url
        self.name = url
        self.baud: int | None = baud
        self.profile = profile
        self.folder = folder
        self.meta = meta
        self._reader: StampingReader | None = None
        self._reader_lock = threading.Lock()
        self._sent: queue.SimpleQueue[tuple[int, bytes, bool]] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._closed = threading.Event()
        self._start_ns: int | None = None
        self.failure: str | None = None
        """Why the port could not be opened or stopped working, if it did."""

    def stop(self) -> None:
        """End `run` soon: the session is finished and the port closed."""
        self._stopping.set()

    def clock_s(self) -> float | None:
        """Seconds since the session started (None until the port is open)."""
        start_ns = self._start_ns
        return None if start_ns is None else (time.monotonic_ns() - start_ns) / 1e9

    def wait_closed(self, timeout_s: float = CLOSE_WAIT_S) -> bool:
        """Wait until `run` has closed the session and the port (or never opened them)."""
        return self._closed.wait(timeout_s)

    def send(self, data: bytes, secret: bool = False) -> None:
        """Write bytes to the port now; they are recorded (as a length only when `secret`).

        Raises:
            PortError: the port is not open (yet, or during a gap), or the write failed.
        """
        with self._reader_lock:
            reader = self._reader
        if reader is None:
            raise PortError(f"{self.url}: not connected; nothing was sent")
        reader.write(data)
        self._sent.put((time.monotonic_ns(), data, secret))

    def run(self, post: Post, cancelled: Callable[[], bool]) -> None:
        """Open, record and read until stopped; failures are posted, never raised."""

        def post_failures(message: Message) -> object:
            if isinstance(message, SourceFailed):
                self.failure = message.text
            return post(message)

        try:
            self._run(post_failures, lambda: cancelled() or self._stopping.is_set())
        finally:
            self._closed.set()

    def _run(self, post: Post, done: Callable[[], bool]) -> None:
        try:
            reader = StampingReader(self.url, self.baud or 115200,
                                    reconnect=default_reconnect(self.url))
        except PortError as error:
            post(SourceFailed(str(error)))
            return
        batch = Batcher(post)
        try:
            recorder = Recorder(self.profile, self.folder, dict(self.meta),
                                StopRule(boots=sys.maxsize), start_ns=time.monotonic_ns(),
                                on_line=batch.add_line)
        except OSError as error:
            reader.close()
            post(SourceFailed(f"{self.folder}: cannot create a session file: "
                            f"{error.strerror or error}; choose another folder (--sessions)"))
            return
        with self._reader_lock:
            self._reader = reader
        self._start_ns = recorder.start_ns
        epoch_s = time.time() - (time.monotonic_ns() - recorder.start_ns) / 1e9
        post(PortOpened(recorder.writer.path, epoch_s))
        try:
            self._pump(reader, recorder, batch, post, done)
        except PortError as error:
            post(SourceFailed(f"{error}; the session so far is saved"))
        except OSError as error:
            post(SourceFailed(f"cannot write the session: {error.strerror or error}"))
        finally:
            with self._reader_lock:
                self._reader = None
            try:
                with contextlib.suppress(OSError):
                    self._record_sent(recorder)
                    recorder.finish("stopped")
                batch.post_now(recorder.capture, recorder.writer.path.name)
            finally:
                reader.close()

    def _pump(self, reader: StampingReader, recorder: Recorder, batch: Batcher, post: Post,
              done: Callable[[], bool]) -> None:
        for event in reader.events(done, poll_s=BATCH_S):
            self._record_sent(recorder)
            match event:
                case Chunk(data, t_ns):
                    recorder.feed(data, t_ns)
                case Idle(t_ns):
                    recorder.feed(b"", t_ns)
                case Gap(t_ns, reason):
                    recorder.writer.event("gap", t_ns - recorder.writer.start_ns, reason=reason)
                    post(PortLost(reason))
                case Reconnected(t_ns, lost_ns):
                    gap_s = (t_ns - lost_ns) / 1e9
                    recorder.writer.event("reconnect", t_ns - recorder.writer.start_ns,
                                          gap_s=round(gap_s, 6))
                    post(PortBack(gap_s))
            batch.maybe_post(recorder.capture, recorder.writer.path.name)

    def _record_sent(self, recorder: Recorder) -> None:
        while True:
            try:
                t_ns, data, secret = self._sent.get_nowait()
            except queue.Empty:
                return
            recorder.writer.tx(data, t_ns - recorder.writer.start_ns, secret)
