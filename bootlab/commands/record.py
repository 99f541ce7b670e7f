"""`bootlab record` and `bootlab ports`: capture boots from a real port into session files."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

from bootlab.commands import places
from bootlab.commands.common import fail
from bootlab.core.analysis.goals import GoalError, goal_meta, parse_goal, with_goal
from bootlab.core.analysis.loading import resolve_profile
from bootlab.core.analysis.phases import Milestone
from bootlab.core.analysis.profiles import ProfileError
from bootlab.core.capture.linemap import ByteMap, parse_maps
from bootlab.core.capture.lines import LineBlock
from bootlab.core.capture.session import SessionWriteError
from bootlab.core.capture.textlog import Echo, TextLog, TextLogError
from bootlab.core.files.config import sessions_dir
from bootlab.core.recording.recorder import BootRecord, Recorder, StopRule
from bootlab.exitcodes import BAD_INPUT, NOT_MET, OK, PORT_FAILED
from bootlab.session.portloop import recorded
from bootlab.transports.device import latency_warning
from bootlab.transports.errors import PortError
from bootlab.transports.line import line_of
from bootlab.transports.netport import stamp_cost_note
from bootlab.transports.place import PlaceError

if TYPE_CHECKING:
    from bootlab.control.engine import RebootStrategy
from bootlab.transports.reader import (
    Event,
    Gap,
    Reconnected,
    StampingReader,
    default_reconnect,
)


def _settings(pairs: list[str]) -> dict[str, Any]:
    bootloader: dict[str, str] = {}
    cmdline = None
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--setting {pair!r}: expected KEY=VALUE")
        if key == "cmdline":
            cmdline = value
        else:
            bootloader[key] = value
    return {"bootloader": bootloader, "cmdline": cmdline}


class _Printer:
    """Received lines on stdout (grabserial style) and in the `--log` file, progress on
    stderr."""

    def __init__(self, out: TextIO | None, err: TextIO, log: TextLog | None) -> None:
        self.out = out
        self.err = err
        self.log = log
        self._echo = Echo()
        self.seen: dict[int, list[Milestone]] = {}

    def block(self, block: LineBlock) -> None:
        """A read's lines, formatted once for both."""
        text = self._echo.block(block)
        if self.out is not None:
            self.out.write(text)
        if self.log is not None:
            try:
                self.log.write(text)
            except TextLogError as error:
                self.err.write(f"bootlab: {error}\n")
                self.log = None

    def milestone(self, record: BootRecord, milestone: Milestone) -> None:
        when = "-" if milestone.host_s is None else f"{milestone.host_s:9.3f} s"
        how = " (fallback)" if milestone.fallback else ""
        if any(m.id == milestone.id for m in self.seen.get(record.index, [])):
            how += " (moved to a later line)"
        self.seen.setdefault(record.index, []).append(milestone)
        self.err.write(f"bootlab: boot {record.index}  {when}  {milestone.id}{how}: "
                       f"{milestone.title}\n")
        self.err.flush()


def _read_before(stopping: list[str], reader: StampingReader) -> Iterator[Event]:
    """After Ctrl-C or SIGTERM: what the reader had read already, so it is recorded too."""
    if stopping:
        yield from reader.drain()


def run_record(args: argparse.Namespace) -> int:
    """Record boots until the stop rule is met, Ctrl-C, SIGTERM or the port fails; from a
    labgrid place (`--place`, LG_PLACE): acquired first, its board powered off and on once the
    console is open (unless --no-power), released at the end."""
    try:
        spec = places.resolve(args)
        power = None
        if args.power_on_cmd or args.power_off_cmd:  # board control loads only when asked
            from bootlab.control.engine import RebootStrategy
            power = RebootStrategy.of("power", on=args.power_on_cmd, off=args.power_off_cmd,
                                      off_s=args.power_off)
    except ValueError as error:
        return fail(str(error), BAD_INPUT)
    if power is not None and spec is not None:
        return fail("give --place (its power resource) or --power-on-cmd, not both", BAD_INPUT)
    try:
        with contextlib.ExitStack() as held:
            try:
                place = None if spec is None else places.enter(held, spec, args, _say)
            except PlaceError as error:
                return fail(str(error), places.exit_code(error))
            return _record(args, place, power)
    except KeyboardInterrupt:  # before the recording's own handlers (opening, acquiring)
        return fail("cancelled", NOT_MET)


class PowerCommandError(Exception):
    """The power-off or power-on command did not run, or failed."""


def _say(text: str) -> None:
    sys.stderr.write(f"bootlab: {text}\n")
    sys.stderr.flush()


def _say_gap(start_ns: int, event: Gap | Reconnected) -> None:
    """The port went away or came back (already recorded): say when, and what it means."""
    at = (event.t_ns - start_ns) / 1e9
    if isinstance(event, Gap):
        _say(f"port lost at {at:.3f} s ({event.reason}); reconnecting (Ctrl-C stops); "
             "this boot is incomplete")
    else:
        _say(f"port reconnected at {at:.3f} s after {(event.t_ns - event.lost_ns) / 1e9:.3f} s")


def _record(args: argparse.Namespace, place: places.OpenPlace | None,
            power: RebootStrategy | None) -> int:
    try:
        profile = resolve_profile(args.profile, args.sessions)
        goal = parse_goal(args.until, args.pattern, profile, args.all) \
            if args.until or args.pattern is not None or args.all else None
        if goal is not None and goal.after_login:
            raise GoalError(f"a {goal.until[0].split(':')[0]}: goal is asked at the board's "
                            "shell, which a recording does not log in to: measure it with "
                            "bootlab boot, ab or the app")
        settings = _settings(args.setting)
        imap, omap = parse_maps(args.imap, args.omap)
        send = ByteMap(omap)(args.send.encode().decode("unicode_escape").encode("latin-1")) \
            if args.send else None
    except (ProfileError, GoalError) as error:
        return fail(str(error), BAD_INPUT)
    except (ValueError, UnicodeError) as error:
        return fail(f"bad argument: {error}", BAD_INPUT)
    if args.boots < 1:
        return fail("--boots must be at least 1", BAD_INPUT)
    reconnect = default_reconnect(args.port) if args.reconnect is None else args.reconnect
    try:
        reader = StampingReader(args.port, args.baud, reconnect=reconnect,
                                line=line_of(args)) if place is None \
            else StampingReader(place.console_url(), args.baud, reconnect=reconnect,
                                locate=place.console_url, line=line_of(args))
    except PortError as error:
        return fail(str(error), PORT_FAILED)
    warning = latency_warning(args.port)
    if warning:
        sys.stderr.write(f"bootlab: warning: {warning}\n")
    stopping: list[str] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signal.Signals(signum).name)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        log = None if args.log is None else TextLog(args.log)
    except TextLogError as error:
        reader.close()
        return fail(str(error), BAD_INPUT)
    printer = _Printer(None if args.quiet else sys.stdout, sys.stderr, log)
    meta = {"label": args.label, "board": args.board, "port": args.port, "baud": args.baud,
            "profile": profile.name, "settings": settings, **({"imap": list(imap)} if imap else {}),
            **({"goal": goal_meta(goal)} if goal else {}),
            **({} if place is None else places.session_meta(place))}
    folder = sessions_dir(args.sessions)
    try:
        recorder = Recorder(with_goal(profile, goal), folder, meta,
                            StopRule(goal.until if goal else (), args.boots, args.timeout,
                                     goal is not None and goal.every),
                            start_ns=time.monotonic_ns(), on_milestone=printer.milestone,
                            on_block=None if args.quiet and log is None else printer.block)
    except SessionWriteError as error:
        reader.close()
        if log is not None:
            log.close()
        return fail(str(error), BAD_INPUT)
    except OSError as error:
        reader.close()
        if log is not None:
            log.close()
        return fail(f"{folder}: cannot create a session file: {error.strerror or error}",
                    BAD_INPUT)
    sys.stderr.write(f"bootlab: recording {args.port} at {args.baud} baud into "
                     f"{recorder.writer.path} (Ctrl-C stops)\n")
    note = stamp_cost_note(args.port, via_ser2net=False) if place is None else \
        stamp_cost_note(place.console_url(), via_ser2net=bool(place.source.get("ser2net")))
    if note:
        sys.stderr.write(f"bootlab: note: {note}\n")
    code = OK
    try:
        if place is not None and place.power is not None and args.power:
            _say(f"power cycle through place {place.name} ({place.power.name})")
            place.power.cycle(recorder.stamp)
        elif power is not None:
            try:
                power.switch(recorder.stamp, _say)
            except (OSError, subprocess.SubprocessError) as error:
                raise PowerCommandError(f"a power command failed ({error}); check "
                                        "--power-off-cmd and --power-on-cmd") from None
        if send:
            reader.write(send)
            recorder.writer.tx(send, time.monotonic_ns() - recorder.start_ns)
        events = reader.events(lambda: bool(stopping) or recorder.finished)
        for _ in recorded(itertools.chain(events, _read_before(stopping, reader)), recorder,
                          partial(_say_gap, recorder.start_ns)):
            pass
    except (PortError, PlaceError) as error:
        sys.stderr.write(f"bootlab: {error}\n")
        code = PORT_FAILED
    except PowerCommandError as error:
        sys.stderr.write(f"bootlab: {error}\n")
        code = NOT_MET
    except SessionWriteError as error:
        sys.stderr.write(f"bootlab: {error}\n")
        code = BAD_INPUT
    except OSError as error:
        sys.stderr.write(f"bootlab: cannot write the session: {error.strerror or error}\n")
        code = BAD_INPUT
    finally:
        try:
            recorder.finish("signal " + stopping[0] if stopping else "stopped")
        finally:
            reader.close()
            if printer.log is not None:
                printer.log.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            sys.stdout.flush()
    for record in recorder.records:
        state = ("done" if record.done else "not done") + \
            (", incomplete: bytes lost in a gap (no total)" if record.gap else "")
        sys.stderr.write(f"bootlab: saved {record.path} (boot {record.index}, "
                         f"{len(recorder.milestones(record))} milestones, {state})\n")
    if code == OK and not recorder.succeeded:
        why = "timed out" if recorder.timed_out else "stopped"
        sys.stderr.write(f"bootlab: {why} before the stop condition was met\n")
        code = NOT_MET
    return code


def run_ports(_args: argparse.Namespace) -> int:
    """List serial ports with their description and USB ids."""
    from serial.tools import list_ports

    ports = sorted(list_ports.comports(), key=lambda p: p.device)
    for info in ports:
        usb = info.vid is not None and info.pid is not None
        ids = f"{info.vid:04x}:{info.pid:04x}" if usb else ""
        print(f"{info.device}\t{info.description}\t{ids}")
    if not ports:
        sys.stderr.write("bootlab: no serial ports found (a pty or socket:// URL works too)\n")
    return OK
