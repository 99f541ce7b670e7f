"""A labgrid place as a port: acquired through labgrid's coordinator, its exported console
opened by URL, the board powered through its power resource, the place released at the end.

labgrid (the optional extra `bootlab[labgrid]`) is imported only by `place_keeper`, the coordinator
session, which loads when a place is opened. It uses labgrid's own client: a `ClientSession` keeps
the coordinator's stream on an event loop of its own thread (the caller's thread, the app's event
loop included, never waits on it except for an answer), places are acquired and released with the
same requests and checks `labgrid-client acquire` and `release` make, and the console and power
resources are labgrid's resource and driver objects, built on the caller's thread (a worker thread
in the app). A place is never taken from anyone: one held by someone else is refused naming the
holder; one this user holds on this host (a run that crashed) is released only when asked
(`release_stale`, or `confirm_stale` answering yes). Several places in one process (`bootlab ab`
over several boards) each have their own session on a TCP connection of its own (`place_keeper`),
and their labgrid drivers are called one at a time (`DRIVER_LOCK`). `tagged_places` lists the
places carrying given tags, with their holders.

The coordinator forgets every acquisition when it restarts, and the exporter then stops its
ser2net: the place's keeper reconnects, acquires the place again (unless someone was quicker:
then `lost` says who) and the console's URL (`OpenPlace.console_url`) follows ser2net to its
new port, so a reader that reopens by it carries on.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bootlab.transports.place_keeper import Keeper

DEFAULT_COORDINATOR = "127.0.0.1:20408"
"""Where labgrid's client looks for the coordinator without LG_COORDINATOR."""
INSTALL_HINT = "pip install bootlab[labgrid]"
CALL_TIMEOUT_S = 15.0
"""How long one request to the coordinator may take."""
CONSOLE_WAIT_S = 15.0
"""How long the exporter may take to start serving the console after an acquisition."""
RECONNECT_S = 1.0
"""How often the keeper tries the coordinator again after losing it."""
RELEASE_S = 5.0
"""How long each step of releasing a place may take (a coordinator stopping takes requests
and may not answer them)."""
EXPORTER_BACK_S = 10.0
"""How long after the coordinator is back its exporter may take to register the place's
resources again before bootlab says it needs a restart."""
EXPORTER_HINT = ("labgrid's exporter exits when it loses the coordinator, so restart the "
                 "exporter (labgrid's systemd unit, Restart=always, does it by itself)")
"""What a restarted coordinator whose place's resources do not come back needs."""
RFC2217_TIMEOUT_S = 3.0
"""How long RFC 2217 option negotiation may take (labgrid's SerialDriver waits as long)."""
POWER_OFF_S = 2.0
"""How long a power cycle keeps the board off (labgrid's NetworkPowerDriver default)."""

DRIVER_LOCK = threading.Lock()
"""Held while a labgrid driver is activated or called: labgrid keeps one stack of its steps
per process, so two boards' power switches (an A/B run over several places, a thread per
board) must not run at the same time (labgrid asserts its stack's order)."""

Stamp = Callable[..., None]
"""Records a power switch: `stamp("power", t_ns, state="on", ...)` with t_ns CLOCK_MONOTONIC."""


class PlaceError(Exception):
    """A place cannot be used; the message says why and what to do."""


class PlaceUnknown(PlaceError):
    """No such place, or labgrid is not installed: a usage problem, not a busy port."""


class PlaceBusy(PlaceError):
    """Someone else holds the place."""

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder
        """`host/user`, as the coordinator says."""


class PlaceStale(PlaceError):
    """This user already holds the place on this host (a run that crashed or still runs)."""


@dataclass(frozen=True)
class PlaceSpec:
    """Which place, through which coordinator, and whether a stale hold of ours may go."""

    name: str
    coordinator: str = DEFAULT_COORDINATOR
    release_stale: bool = False


def place_spec(name: str | None, coordinator: str | None = None, release_stale: bool = False,
               environ: dict[str, str] | None = None) -> PlaceSpec | None:
    """The place asked for by `--place` or LG_PLACE, through `--coordinator`, LG_COORDINATOR
    or labgrid's default; None when neither names a place."""
    env = os.environ if environ is None else environ
    name = name or env.get("LG_PLACE") or None
    if name is None:
        return None
    return PlaceSpec(name, coordinator_of(coordinator, env), release_stale)


def coordinator_of(coordinator: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The coordinator `--coordinator` names, else LG_COORDINATOR, else labgrid's default."""
    env = os.environ if environ is None else environ
    return coordinator or env.get("LG_COORDINATOR") or DEFAULT_COORDINATOR


def identity() -> str:
    """Who this process is to the coordinator, `host/user` (LG_HOSTNAME and LG_USERNAME
    override, as in labgrid's client)."""
    host = os.environ.get("LG_HOSTNAME") or socket.gethostname()
    return f"{host}/{os.environ.get('LG_USERNAME') or getpass.getuser()}"


@dataclass
class PlacePower:
    """The place's power resource, through labgrid's NetworkPowerDriver."""

    name: str
    """What switches it, for messages and the session (`simplerest http://...`)."""
    driver: Any
    off_s: float = POWER_OFF_S

    def cycle(self, stamp: Stamp) -> None:
        """Off, `off_s` seconds, on; each switch is stamped just before its request is sent,
        with how long the switch took to answer (`ack_ms`): the `on` is the boot's time zero.

        Raises:
            PlaceError: the power switch failed.
        """
        self.switch(False, stamp)
        time.sleep(self.off_s)
        self.switch(True, stamp)

    def switch(self, on: bool, stamp: Stamp) -> None:
        """Switch on or off, stamped as `cycle` does.

        Raises:
            PlaceError: the power switch failed.
        """
        with DRIVER_LOCK:
            t_ns = time.monotonic_ns()
            try:
                self.driver.on() if on else self.driver.off()
            except Exception as error:  # requests, a backend's own errors: all one failure
                raise PlaceError(f"power {'on' if on else 'off'} through {self.name} failed: "
                                 f"{said(error)}") from None
            done_ns = time.monotonic_ns()
        stamp("power", t_ns, state="on" if on else "off", via=self.name,
              ack_ms=round((done_ns - t_ns) / 1e6, 3))


@dataclass
class OpenPlace:
    """What the board commands need of an acquired place (see `open_place`)."""

    name: str
    baud: int
    """The console resource's speed."""
    source: dict[str, Any]
    """Where the bytes come from, for the session header (`place` and the fields of
    `source_fields`)."""
    power: PlacePower | None
    """The place's power resource; None when it has none."""
    _keeper: Keeper = field(repr=False)

    def console_url(self) -> str:
        """The console's URL now (`rfc2217://host:port?...` or `socket://host:port`); it changes
        when the exporter restarts ser2net (after a coordinator restart)."""
        return self._keeper.url

    @property
    def lost(self) -> str | None:
        """Why the place is not ours any more (None while it is)."""
        return self._keeper.lost


@contextlib.contextmanager
def open_place(spec: PlaceSpec, confirm_stale: Callable[[str], bool] | None = None,
               say: Callable[[str], None] = lambda _text: None,
               power_off_s: float = POWER_OFF_S) -> Iterator[OpenPlace]:
    """Acquire a place, wait for its console, yield it; release the place on leaving, whatever
    ends the block (an error, Ctrl-C, SIGTERM made an exception by `sigterm_interrupts`).

    What the board commands take from the `OpenPlace`:

    - `console_url()`: the URL to open (`StampingReader(url, baud, locate=console_url)`, or
      `PortLink(url, baud, locate=...)`: a reopen after a gap asks it again);
    - `baud`: the console resource's speed;
    - `power`: None, or `power.cycle`, a `RebootStrategy(power=...)` callable (it takes the
      session's `stamp` and records the switches); `power.name` says what it switches;
    - `source` (with `name`): the session header's `place` and `source` fields.

    The board is not powered here: `power.cycle(stamp)` powers it off and on, after the caller
    has opened the console (so nothing of the boot is missed). Several places are opened with
    one `contextlib.ExitStack`, each `open_place` acquiring its own (and each keeping its own
    coordinator session on its own thread); leaving the stack releases them all:

        with contextlib.ExitStack() as stack:
            boards = [stack.enter_context(open_place(spec)) for spec in specs]

    Args:
        spec: the place, its coordinator, and whether a stale hold of ours may be released.
        confirm_stale: asked (with a question naming the place) when this user already holds
            the place on this host and `spec.release_stale` is off: True releases it first.
            Called on the caller's thread.
        say: progress messages (acquired, released, reconnected).
        power_off_s: how long a power cycle keeps the board off.

    Raises:
        PlaceUnknown: labgrid is not installed, or the coordinator knows no such place.
        PlaceBusy: someone else holds the place (`holder` says who).
        PlaceStale: this user holds it already here and it was not to be released.
        PlaceError: the coordinator cannot be reached, or the place has no usable console.
    """
    from bootlab.transports.place_keeper import Keeper  # asyncio and gRPC: only with a place

    keeper = Keeper(spec, say)
    note = serial_note()
    if note is not None:
        say(f"warning: {note}")
    try:
        keeper.acquire(confirm_stale)
        entry = keeper.console_entry()
        place = OpenPlace(spec.name, int(entry.args.get("speed", 115200)),
                          source_fields(spec, entry), keeper.power(power_off_s), keeper)
        yield place
    finally:
        keeper.close()


def tagged_places(coordinator: str, tags: Mapping[str, str]) -> dict[str, str | None]:
    """Every place whose tags (`labgrid-client set-tags`) include all of `tags`, by name, with
    its holder (`host/user`; None when free), as the coordinator lists places to its clients.

    Raises:
        PlaceUnknown: labgrid is not installed.
        PlaceError: the coordinator cannot be reached.
    """
    from bootlab.transports.place_keeper import Keeper

    keeper = Keeper(PlaceSpec("", coordinator), lambda _text: None)
    try:
        return keeper._call(keeper._tagged(dict(tags)))
    finally:
        keeper.close()


def held_by(holder: str) -> str:
    """A holder as people say it: `alice on ws7` for the coordinator's `ws7/alice`."""
    host, _, user = holder.partition("/")
    return f"{user} on {host}"


def source_fields(spec: PlaceSpec, entry: Any) -> dict[str, Any]:
    """The session header's account of a place's console: place, coordinator, exporter and
    its host, RFC 2217 or raw, and whether ser2net serves a local port (the exporter's device
    path), from the console's resource entry."""
    exporter, group = entry.path[0], entry.path[1]
    device = entry.extra.get("path")
    return {"place": spec.name, "coordinator": spec.coordinator, "exporter": exporter,
            "group": group, "host": entry.args.get("host"),
            "protocol": entry.args.get("protocol", "rfc2217"), "ser2net": device is not None,
            "device": device}


def sigterm_interrupts() -> contextlib.AbstractContextManager[None]:
    """While inside: SIGTERM raises KeyboardInterrupt in the main thread, so a place is
    released on SIGTERM exactly as on Ctrl-C (outside the main thread: nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt("SIGTERM")

    @contextlib.contextmanager
    def installed() -> Iterator[None]:
        previous = signal.signal(signal.SIGTERM, interrupt)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)

    return installed()


LABGRID_SERIAL = "3.5.0.2"
"""The `serial` version of labgrid's pyserial fork (pyserial-labgrid), which labgrid pins."""


def serial_note() -> str | None:
    """Why the `serial` package in use is not labgrid's fork, with the command that fixes it
    (None: it is). Both install `serial`; whichever pip installed last is imported."""
    import serial

    version = str(getattr(serial, "__version__", ""))
    if version == LABGRID_SERIAL:
        return None
    return (f"the `serial` package is pyserial {version or '?'}, not labgrid's fork "
            f"{LABGRID_SERIAL} (its RFC 2217 fixes): pip install --no-deps --force-reinstall "
            f"pyserial-labgrid=={LABGRID_SERIAL}")


def said(error: BaseException) -> str:
    """labgrid's message without its `Error: ` prefix; a gRPC error as its status and details
    in one line (never its raw, multi-line text)."""
    code, details = getattr(error, "code", None), getattr(error, "details", None)
    if callable(code) and callable(details):
        status = getattr(code(), "name", str(code()))
        text = " ".join(str(details() or "").split())
        return f"the coordinator did not answer: {status}" + (f", {text}" if text else "")
    if isinstance(error, TimeoutError):  # asyncio.wait_for raises it too (Python 3.11)
        return "the coordinator did not answer in time"
    text = " ".join((str(error) or type(error).__name__).split())
    return text.removeprefix("Error: ")
