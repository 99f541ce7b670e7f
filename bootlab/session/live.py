"""A live port for the app: the stamping reader, recorded into session files, in batches, and
the board jobs run on the same thread.

This is the one module of the UI that knows the reader's API. `run` (on a worker thread)
opens the port, records every read into a session file per boot (`Recorder`, the same as
`bootlab record`) and posts batches of lines; `send` (on the UI thread) writes typed keys at
once and queues them for the session, which only the worker thread writes.

Board jobs (`submit`, see `board_jobs`) run on the worker thread between two reads, through a
`Console` whose link takes its reads from the same reader: nobody else owns the port, the
console pane keeps streaming and the recording goes on. While a job runs, typed keys are
refused (`BoardBusy`), not queued: keys landing in the middle of paced U-Boot commands would
corrupt them, and keys saved for later would reach a board in a state nobody chose. Ctrl-T C
cancels a job at its next read.

A job's measured boot starts a new session (and a new capture) at its boot command; the app
still sees one stream: `StreamShift` keeps line numbers, times and boot indexes growing.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from bootlab.control.board_console import Console
from bootlab.control.engine import Bench, RebootStrategy
from bootlab.control.linux import Credentials
from bootlab.core.analysis.phases import Boot
from bootlab.core.analysis.profiles import Profile
from bootlab.core.capture.linemap import ByteMap
from bootlab.core.capture.lines import Line
from bootlab.core.capture.redaction import SecretInput
from bootlab.core.capture.session import SessionWriter
from bootlab.core.capture.textlog import TextLog
from bootlab.core.recording.recorder import BootRecord, Recorder, StopRule
from bootlab.session.batcher import BATCH_S, Batcher
from bootlab.session.board_jobs import BoardJob, failure_text
from bootlab.session.events import (
    Event,
    JobEnded,
    JobNote,
    JobStarted,
    Outcome,
    PlaceNote,
    PlaceQuestion,
    PortBack,
    PortLost,
    PortOpened,
    Post,
    RecordingFailed,
    SourceFailed,
)
from bootlab.session.portloop import recorded
from bootlab.transports.errors import PortError
from bootlab.transports.line import SerialLine
from bootlab.transports.place import POWER_OFF_S, PlaceError, PlaceSpec, open_place
from bootlab.transports.reader import (
    Chunk,
    Gap,
    Idle,
    Reconnected,
    StampingReader,
    default_reconnect,
)

CLOSE_WAIT_S = 5.0
"""How long `wait_closed` waits for the session to be flushed and closed."""
PACE_S = 0.01
"""Delay between characters a job types (U-Boot drops fast input)."""
JOB_POLL_S = 0.02
SHOWN_LINE_BYTES = 16 * 1024
"""The app keeps this much of a line (it shows 4 KiB): a board that never sends a newline
cannot fill its memory with 4 MiB pieces. The session keeps every byte."""


class BoardBusy(Exception):
    """A board job has the console; the message says which and how to stop it."""


class JobCancelled(Exception):
    """The running job was cancelled, or the app is closing."""


def _ends_with_job(meta: dict[str, Any]) -> bool:
    """Whether the session a job leaves open ends with it: a setup dialogue or an A/B boot
    (what the board does next belongs to neither). A boot the job started and measured
    goes on in its own session until the next boot."""
    return meta.get("role") == "setup" or bool(meta.get("ab"))


class StreamShift:
    """Places the current capture's lines and boots in the stream the app has shown so far."""

    def __init__(self, origin_ns: int) -> None:
        self.origin_ns = origin_ns
        """Time zero of the app's stream (the first session's start)."""
        self.lines = 0
        self.offset = 0
        self.boots = 0
        self.t_ns = 0
        """The current capture's time zero, from the stream's."""

    def rebase(self, lines: int, offset: int, boots: int, t_ns: int) -> None:
        """A new capture starts at `t_ns` after `lines` lines, `offset` bytes, `boots` boots."""
        self.lines += lines
        self.offset += offset
        self.boots += boots
        self.t_ns = t_ns - self.origin_ns

    def line(self, line: Line) -> Line:
        """The line with its stream number and time."""
        if not (self.lines or self.t_ns):
            return line
        return replace(line, number=line.number + self.lines, offset=line.offset + self.offset,
                       t_ns=None if line.t_ns is None else line.t_ns + self.t_ns)

    def boot(self, boot: Boot) -> Boot:
        """The boot with its stream index, lines and times."""
        if not (self.lines or self.t_ns):
            return boot
        t_s = self.t_ns / 1e9
        return Boot(boot.index + self.boots, boot.first_line + self.lines,
                    None if boot.start_host_s is None else boot.start_host_s + t_s,
                    boot.first_offset + self.offset,
                    [replace(m, line=m.line + self.lines, boot=m.boot + self.boots,
                             host_s=None if m.host_s is None else m.host_s + t_s)
                     for m in boot.milestones])


class LiveRecorder(Recorder):
    """A Recorder whose lines reach the app shifted into one stream across new sessions."""

    def __init__(self, profile: Profile, folder: Path, meta: dict[str, Any],
                 show: Callable[[Line], None],
                 on_write_error: Callable[[SessionWriter], object] | None = None) -> None:
        super().__init__(profile, folder, meta, StopRule(boots=sys.maxsize),
                         start_ns=time.monotonic_ns(), on_line=self._shown,
                         on_write_error=on_write_error)
        self.shift = StreamShift(self.start_ns)
        self._show = show
        self._last_line = 0

    def _shown(self, line: Line) -> None:
        self._last_line = line.number
        self._show(self.shift.line(line.head(SHOWN_LINE_BYTES)))

    def start_session(self, t_ns: int, **meta: Any) -> BootRecord:
        """As Recorder's; the line being received is shown as it is, cut there."""
        framer = self.capture.framer
        partial = framer.partial
        if partial is not None:
            self._show(self.shift.line(partial))
        self.shift.rebase(partial.number if partial is not None else self._last_line,
                          framer.offset, len(self.capture.boots), t_ns)
        self._last_line = 0
        return super().start_session(t_ns, **meta)


class _JobLink:
    """The Link a job's Console uses: the reader's events, taken on the port's own thread."""

    def __init__(self, reader: StampingReader,
                 stream: Callable[[float], Iterator[tuple[bytes, int]]]) -> None:
        self._reader = reader
        self._stream = stream

    def chunks(self, _recorder: Recorder, poll_s: float) -> Iterator[tuple[bytes, int]]:
        """Reads, recorded by the live link's own loop (into the recorder the job's console
        shares), until the job is cancelled (or the app closes), then JobCancelled."""
        yield from self._stream(poll_s)
        raise JobCancelled("cancelled")

    def write(self, data: bytes) -> None:
        """Send bytes now."""
        self._reader.write(data)

    def set_line(self, name: str, value: bool | int) -> None:
        """Set the baud rate or a modem line (dtr, rts)."""
        self._reader.set_line(name, value)


class LiveLink:
    """A serial port or URL read on a worker thread into session files."""

    live = True

    def __init__(self, url: str, baud: int | None, profile: Profile, folder: Path,
                 meta: dict[str, object], reboot: RebootStrategy | None = None,
                 pace_s: float = PACE_S, place: PlaceSpec | None = None,
                 power_off_s: float = POWER_OFF_S) -> None:
        """A port at `url`, or (with `place`) a labgrid place, acquired on the port's thread
        when `run` starts (`url` then names it, `place:NAME`) and released when it ends."""
        self.url = url
        self.name = url
        self.place = place
        self.power_off_s = power_off_s
        self.baud: int | None = baud
        self.profile = profile
        self.folder = folder
        self.meta = meta
        self.reboot = reboot or RebootStrategy()
        """How board jobs restart the board."""
        self.credentials = Credentials()
        """Who board jobs log in as (after a goal, to collect; to reboot from a shell)."""
        self.collect = False
        """Board jobs offer to read each measured boot's dmesg after its goal (`--collect`):
        on by default where a login was given."""
        self.pace_s = pace_s
        self.secrets = SecretInput()
        """Which typed keys are a password (`send(..., secret=True)`)."""
        self.line = SerialLine()
        """The serial line's framing, flow control and modem lines at open."""
        self.omap = ByteMap(())
        """What typed bytes become before they are sent (`--omap`)."""
        self.text_log: TextLog | None = None
        """A plain-text copy of the console (`--log FILE`), written as lines are shown."""
        self.local_echo = False
        """Show typed keys in the console from the start (`--echo`)."""
        self._reader: StampingReader | None = None
        self._recorder: LiveRecorder | None = None
        self._reader_lock = threading.Lock()
        self._sent: queue.SimpleQueue[tuple[int, bytes, bool]] = queue.SimpleQueue()
        self._stamps: queue.SimpleQueue[tuple[str, int]] = queue.SimpleQueue()
        """Events to record (a BREAK sent), from the app's thread to the port's."""
        self._stopping = threading.Event()
        self._closed = threading.Event()
        self._job: BoardJob | None = None
        self._cancel = threading.Event()
        self._port_failed = False
        self._goal_change: tuple[Profile, dict[str, Any]] | None = None
        """A new profile and goal for the port's thread to take at its next read."""
        self._start_ns: int | None = None
        self._locate: Callable[[], str] | None = None
        """Where the place's console is now (None: at `url`)."""
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

    def session_paths(self) -> list[Path]:
        """The session files written so far, oldest first."""
        recorder = self._recorder
        return [] if recorder is None else [record.path for record in list(recorder.records)]

    @property
    def busy(self) -> str | None:
        """The title of the board job queued or running (None: keys reach the board)."""
        with self._reader_lock:
            return None if self._job is None else self._job.title

    def submit(self, job: BoardJob) -> None:
        """Queue a board job for the port's thread (it starts at the next read or idle poll).

        Raises:
            PortError: the port is not open.
            BoardBusy: another job is queued or running.
        """
        with self._reader_lock:
            if self._reader is None:
                raise PortError(f"{self.url}: not connected; the board cannot be driven")
            if self._job is not None:
                raise BoardBusy(f"the board is busy: {self._job.title} (Ctrl-T C cancels it)")
            self._cancel.clear()
            self._job = job

    def cancel_job(self) -> bool:
        """Ask the job to stop at its next read; False when there is none."""
        if self.busy is None:
            return False
        self._cancel.set()
        return True

    def set_goal(self, goal: dict[str, Any], profile: Profile) -> None:
        """Measure to another goal (as `goal_meta` gives it), with `profile` holding its
        milestone: the port's thread takes both at its next read; the open session stores the
        goal from then on, and the next sessions in their headers."""
        with self._reader_lock:
            self.profile = profile
            self.meta = {**self.meta, "goal": goal}
            self._goal_change = (profile, goal)

    def send(self, data: bytes, secret: bool = False) -> None:
        """Write bytes to the port now; they are recorded (as a length only when `secret`).

        Raises:
            BoardBusy: a board job has the console; nothing was sent.
            PortError: the port is not open (yet, or during a gap), or the write failed.
        """
        with self._reader_lock:
            reader, job = self._reader, self._job
        if job is not None:
            raise BoardBusy(f"the board is busy: {job.title}; keys are not sent until it ends "
                            "(Ctrl-T C cancels it)")
        if reader is None:
            raise PortError(f"{self.url}: not connected; nothing was sent")
        data = self.omap(data)
        reader.write(data)
        self._sent.put((time.monotonic_ns(), data, secret))

    def send_break(self) -> None:
        """Send a BREAK now (recorded as a `break` event of the session).

        Raises:
            BoardBusy: a board job has the console.
            PortError: the port is not open, or cannot send one.
        """
        with self._reader_lock:
            reader, job, recorder = self._reader, self._job, self._recorder
        if job is not None:
            raise BoardBusy(f"the board is busy: {job.title}; nothing was sent")
        if reader is None:
            raise PortError(f"{self.url}: not connected; nothing was sent")
        reader.send_break()
        if recorder is not None:  # the port's thread writes it, in order with the reads
            self._stamps.put(("break", time.monotonic_ns()))

    def run(self, post: Post, cancelled: Callable[[], bool]) -> None:
        """Open, record and read until stopped; failures are posted, never raised."""

        def post_failures(event: Event) -> object:
            if isinstance(event, SourceFailed):
                self.failure = event.text
            return post(event)

        try:
            self._run(post_failures, lambda: cancelled() or self._stopping.is_set())
        finally:
            self._closed.set()

    def _run(self, post: Post, done: Callable[[], bool]) -> None:
        with contextlib.ExitStack() as held:
            if self.place is not None:
                try:
                    self._hold(held, self.place, post, done)
                except PlaceError as error:
                    post(SourceFailed(str(error)))
                    return
            self._read(post, done)

    def _hold(self, held: contextlib.ExitStack, spec: PlaceSpec, post: Post,
              done: Callable[[], bool]) -> None:
        """Acquire the place (asking the app before releasing a stale hold of this user's),
        read its console from now on, power it through its power resource (R); it is released
        when `held` closes.

        Raises:
            PlaceError: as `open_place`.
        """
        def confirm(question: str) -> bool:
            answers: queue.SimpleQueue[bool] = queue.SimpleQueue()
            post(PlaceQuestion(f"{question}. Release it and acquire it again?", answers.put))
            while not done():
                with contextlib.suppress(queue.Empty):
                    return answers.get(timeout=0.1)
            return False

        def note(text: str) -> None:
            post(PlaceNote(text))

        place = held.enter_context(open_place(spec, confirm, note, self.power_off_s))
        self.url = place.console_url()
        self._locate = place.console_url
        self.baud = self.baud or place.baud
        self.meta = {**self.meta, "baud": self.baud, "place": place.name,
                     "source": place.source}
        if place.power is not None:
            self.reboot = RebootStrategy(
                "power" if self.reboot.kind == "auto" else self.reboot.kind,
                self.reboot.command, power=place.power.cycle,
                power_name=f"place {place.name} ({place.power.name})")

    def _read(self, post: Post, done: Callable[[], bool]) -> None:
        try:
            reader = StampingReader(self.url, self.baud or 115200,
                                    reconnect=default_reconnect(self.url), locate=self._locate,
                                    line=self.line)
        except PortError as error:
            post(SourceFailed(str(error)))
            return
        batch = Batcher(post)
        try:
            recorder = LiveRecorder(  # a file that cannot be written: the console goes on
                self.profile, self.folder, dict(self.meta), batch.add_line,
                lambda writer: post(RecordingFailed(f"{writer.problem()}. The console goes on; "
                                                    "nothing more is recorded")))
        except OSError as error:
            reader.close()
            post(SourceFailed(f"{self.folder}: cannot create a session file: "
                              f"{error.strerror or error}; choose another folder (--sessions)"))
            return
        batch.shift = recorder.shift
        with self._reader_lock:
            self._reader = reader
            self._recorder = recorder
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

    def _pump(self, reader: StampingReader, recorder: LiveRecorder, batch: Batcher, post: Post,
              done: Callable[[], bool]) -> None:
        for _ in self._stream(reader, recorder, batch, post, done, BATCH_S):
            with self._reader_lock:
                job, change, self._goal_change = self._job, self._goal_change, None
            if change is not None:
                profile, goal = change
                recorder.use_profile(profile, goal=goal)
            if job is not None:
                self._run_job(job, reader, recorder, batch, post, done)

    def _stream(self, reader: StampingReader, recorder: Recorder, batch: Batcher, post: Post,
                done: Callable[[], bool], poll_s: float) -> Iterator[tuple[bytes, int]]:
        """Reads recorded (the session's one port loop) and yielded as (data, t_ns), (b"", t_ns)
        while idle; gaps and reconnections posted, typed keys recorded in order with the reads,
        and a batch posted after each read is taken in."""
        def tell(event: Gap | Reconnected) -> None:
            post(PortLost(event.reason) if isinstance(event, Gap)
                 else PortBack((event.t_ns - event.lost_ns) / 1e9))

        def sent_first() -> Iterator[Chunk | Idle | Gap | Reconnected]:
            for event in reader.events(done, poll_s):
                self._record_sent(recorder)
                yield event

        try:
            for read in recorded(sent_first(), recorder, tell):
                yield read
                batch.maybe_post(recorder.capture, recorder.writer.path.name)
        except PortError:
            self._port_failed = True
            raise

    def _run_job(self, job: BoardJob, reader: StampingReader, recorder: LiveRecorder,
                 batch: Batcher, post: Post, done: Callable[[], bool]) -> None:
        """Run a job on this thread; whatever happens, the port is the app's again after it."""
        def stopped() -> bool:
            return done() or self._cancel.is_set()

        link = _JobLink(reader, lambda poll_s: self._stream(reader, recorder, batch, post,
                                                            stopped, poll_s))
        console = Console(link, recorder, pace_s=self.pace_s, poll_s=JOB_POLL_S)
        console.secrets = self.secrets
        bench = Bench(console, self.reboot, self.credentials,
                      say=lambda text: post(JobNote(job.title, text, tell=True)))
        post(JobStarted(job.title))
        recorder.auto_split = False  # the job starts each session itself
        fatal: PortError | None = None
        outcome: Outcome = "done"
        try:
            text = job.run(bench)
        except JobCancelled:
            outcome, text = "cancelled", f"{job.title}: cancelled; what was recorded is kept"
        except Exception as error:  # every failure is told, never raised into the app
            outcome, text = "failed", failure_text(job.title, error)
            if isinstance(error, PortError) and self._port_failed:
                fatal = error
        recorder.auto_split = True
        base = dict(self.meta)
        if fatal is None and _ends_with_job(recorder.meta):
            recorder.meta = base
            recorder.start_session(time.monotonic_ns())
        recorder.meta = base
        with self._reader_lock:
            self._job = None
        recorder.writer.flush(sync=True)  # what the job recorded is on disk when it says so
        batch.post_now(recorder.capture, recorder.writer.path.name)  # the panes first
        post(JobEnded(job.title, outcome, text))
        if fatal is not None:
            raise fatal

    def _record_sent(self, recorder: Recorder) -> None:
        while True:
            try:
                kind, t_ns = self._stamps.get_nowait()
            except queue.Empty:
                break
            recorder.stamp(kind, t_ns)
        while True:
            try:
                t_ns, data, secret = self._sent.get_nowait()
            except queue.Empty:
                return
            recorder.writer.tx(data, t_ns - recorder.writer.start_ns, secret)
