"""A labgrid place as a port: acquired through labgrid's coordinator, its exported console
opened by URL, the board powered through its power resource, the place released at the end.

This is the one module that touches labgrid (the optional extra `bootlab[labgrid]`, imported
only when a place is opened). It uses labgrid's own client: a `ClientSession` keeps the
coordinator's stream on an event loop of its own thread (the caller's thread, the app's event
loop included, never waits on it except for an answer), places are acquired and released with
the same requests and checks `labgrid-client acquire` and `release` make, and the console and
power resources are labgrid's resource and driver objects, built on the caller's thread (a
worker thread in the app). A place is never taken from anyone: one held by someone else is
refused naming the holder; one this user holds on this host (a run that crashed) is released
only when asked (`release_stale`, or `confirm_stale` answering yes). Several places in one
process (`bootlab ab` over several boards) each have their own session on a TCP connection of
its own (`_own_connection`), and their labgrid drivers are called one at a time (`DRIVER_LOCK`).
`tagged_places` lists the places carrying given tags, with their holders.

The coordinator forgets every acquisition when it restarts, and the exporter then stops its
ser2net: the place's keeper reconnects, acquires the place again (unless someone was quicker:
then `lost` says who) and the console's URL (`OpenPlace.console_url`) follows ser2net to its
new port, so a reader that reopens by it carries on.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import getpass
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

DEFAULT_COORDINATOR = "127.0.0.1:20408"
"""Where labgrid's client looks for the coordinator without LG_COORDINATOR."""
INSTALL_HINT = "pip install bootlab[labgrid]"
CALL_TIMEOUT_S = 15.0
"""How long one request to the coordinator may take."""
CONSOLE_WAIT_S = 15.0
"""How long the exporter may take to start serving the console after an acquisition."""
RECONNECT_S = 1.0
"""How often the keeper tries the coordinator again after losing it."""
RFC2217_TIMEOUT_S = 3.0
"""How long RFC 2217 option negotiation may take (labgrid's SerialDriver waits as long)."""
POWER_OFF_S = 2.0
"""How long a power cycle keeps the board off (labgrid's NetworkPowerDriver default)."""

DRIVER_LOCK = threading.Lock()
"""Held while a labgrid driver is activated or called: labgrid keeps one stack of its steps
per process, so two boards' power switches (an A/B run over several places, a thread per
board) must not run at the same time (labgrid asserts its stack's order)."""

T = TypeVar("T")
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
                                 f"{_said(error)}") from None
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
    _keeper: _Keeper = field(repr=False)

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
    keeper = _Keeper(spec, say)
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
    keeper = _Keeper(PlaceSpec("", coordinator), lambda _text: None)
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


@dataclass(frozen=True)
class _Entry:
    """A resource of the place, copied off the keeper's loop."""

    path: tuple[str, str, str, str]
    """exporter, group, class, resource name"""
    args: dict[str, Any]
    extra: dict[str, Any]


class _Keeper:
    """labgrid's ClientSession on its own event loop thread, holding one place."""

    def __init__(self, spec: PlaceSpec, say: Callable[[str], None]) -> None:
        try:
            import grpc  # noqa: F401  (labgrid's dependency; its absence means no labgrid)
            from labgrid.remote import client
        except ImportError as error:
            raise PlaceUnknown(f"--place needs labgrid ({INSTALL_HINT}): {error}") from None
        self.spec = spec
        self.say = say
        self.client = client
        self.me = identity()
        self.url = ""
        self.lost: str | None = None
        self.acquired = False
        self.session: Any = None
        self._closing = False
        self._watch: concurrent.futures.Future[None] | None = None
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                        name=f"bootlab place {spec.name}")
        self._thread.start()
        try:
            self.session = self._call(self._connect())
        except BaseException:
            self._stop_loop()
            raise

    def _call(self, coroutine: Coroutine[Any, Any, T], timeout: float = CALL_TIMEOUT_S) -> T:
        """Run a coroutine on the keeper's loop and wait for its result."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise PlaceError(f"the labgrid coordinator at {self.spec.coordinator} did not "
                             f"answer within {timeout:.0f} s") from None

    async def _connect(self) -> Any:
        from labgrid.util.proxy import proxymanager

        address = proxymanager.get_grpc_address(self.spec.coordinator, default_port=20408)
        args = argparse.Namespace(place=self.spec.name, allow_unmatched=False, kick=False)
        session = self.client.ClientSession(address, asyncio.get_running_loop(), args=args)
        try:
            await _own_connection(session, address)
            await session.start()
        except Exception as error:
            with contextlib.suppress(Exception):
                await session.close()
            raise PlaceError(f"cannot reach the labgrid coordinator at {self.spec.coordinator} "
                             f"(--coordinator, LG_COORDINATOR): {error}") from None
        return session

    def acquire(self, confirm_stale: Callable[[str], bool] | None) -> None:
        """Acquire the place (releasing a stale hold of ours only when allowed)."""
        holder = self._call(self._holder())
        if holder == self.me:
            question = (f"place {self.spec.name} is already acquired by you ({holder}), "
                        "perhaps by a bootlab or labgrid-client that crashed or still runs")
            if not (self.spec.release_stale or (confirm_stale and confirm_stale(question))):
                raise PlaceStale(f"{question}; release it with --release-stale (or "
                                 f"`labgrid-client -p {self.spec.name} release`) if no run "
                                 "of yours uses it")
            self._call(self._release())
            self.say(f"place {self.spec.name}: released your stale hold")
        elif holder is not None:
            self._busy(holder)
        self._call(self._acquire())
        self.acquired = True
        self.say(f"place {self.spec.name}: acquired as {self.me}")
        self._watch = asyncio.run_coroutine_threadsafe(self._keep(), self.loop)

    def _busy(self, holder: str) -> None:
        raise PlaceBusy(f"place {self.spec.name} is held by {held_by(holder)}; ask them to "
                        f"release it (labgrid-client -p {self.spec.name} release)", holder)

    async def _tagged(self, tags: dict[str, str]) -> dict[str, str | None]:
        return {name: str(place.acquired) if place.acquired else None
                for name, place in sorted(self.session.places.items())
                if all(place.tags.get(key) == value for key, value in tags.items())}

    async def _holder(self) -> str | None:
        try:
            place = self.session.get_place(self.spec.name)
        except self.client.Error as error:
            raise PlaceUnknown(f"{self.spec.coordinator}: {_said(error)}") from None
        return str(place.acquired) if place.acquired else None

    async def _acquire(self) -> None:
        import grpc
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        place = self.session.get_place(self.spec.name)
        try:
            self.session.check_matches(place)
        except self.client.Error as error:
            raise PlaceError(f"place {self.spec.name}: {_said(error)}") from None
        try:
            await self.session.stub.AcquirePlace(pb2.AcquirePlaceRequest(placename=place.name))
        except grpc.aio.AioRpcError as error:
            holder = self.session.get_place(self.spec.name).acquired
            if holder:
                self._busy(str(holder))
            raise PlaceError(f"place {self.spec.name}: {error.details()}") from None
        await self.session.sync_with_coordinator()

    async def _release(self) -> None:
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        # fromuser: released only while it is still ours, never someone's who took it since
        await self.session.stub.ReleasePlace(
            pb2.ReleasePlaceRequest(placename=self.spec.name, fromuser=self.me))
        await self.session.sync_with_coordinator()

    def console_entry(self) -> _Entry:
        """The place's console (a NetworkSerialPort) once the exporter serves it; sets `url`.

        Raises:
            PlaceError: the place has no console, or it was not served in time.
        """
        entry = self._call(self._console(), CONSOLE_WAIT_S + CALL_TIMEOUT_S)
        self.url = self._url_of(entry)
        return entry

    async def _console(self) -> _Entry:
        deadline = time.monotonic() + CONSOLE_WAIT_S
        while True:
            entries = self._entries("NetworkSerialPort")
            ready = [e for e in entries if e[1] and e[0].args.get("port")]
            if ready:
                return ready[0][0]
            if time.monotonic() > deadline:
                why = "it is not available" if entries else "the place has no NetworkSerialPort"
                raise PlaceError(f"place {self.spec.name}: no console within "
                                 f"{CONSOLE_WAIT_S:.0f} s ({why}; is its exporter running?)")
            await asyncio.sleep(0.1)

    def _entries(self, cls: str) -> list[tuple[_Entry, bool]]:
        """The acquired resources of class `cls`, with whether each is available."""
        place = self.session.get_place(self.spec.name)
        found = []
        for path in place.acquired_resources:
            exporter, group, kind, name = path
            entry = self.session.resources.get(exporter, {}).get(group, {}).get(name)
            if kind == cls and entry is not None:
                found.append((_Entry(tuple(path), dict(entry.args), dict(entry.extra)),
                              bool(entry.avail)))
        return found

    def _url_of(self, entry: _Entry) -> str:
        """The pyserial URL of a NetworkSerialPort (through labgrid's proxy, if it needs one)."""
        from labgrid.resource import NetworkSerialPort
        from labgrid.util.proxy import proxymanager

        resource = NetworkSerialPort(target=None, name=None, **entry.args)
        host, port = proxymanager.get_host_and_port(resource)
        if resource.protocol == "raw":
            return f"socket://{host}:{port}"
        # as labgrid's SerialDriver: ser2net does not answer the control option's request
        return f"rfc2217://{host}:{port}?ign_set_control&timeout={RFC2217_TIMEOUT_S}"

    def power(self, off_s: float) -> PlacePower | None:
        """The place's NetworkPowerPort as labgrid's driver (built on this, the caller's,
        thread: activating it may wait for the resource); None when the place has none."""
        entries = self._call(self._power_entries())
        if not entries:
            return None
        from labgrid import Target
        from labgrid.driver import NetworkPowerDriver
        from labgrid.resource.remote import RemotePlace

        self.session._prepare_manager()  # labgrid's RemotePlace expands through this session
        target = Target(self.spec.name)
        RemotePlace(target, name=self.spec.name)
        driver = NetworkPowerDriver(target, name=None)
        with DRIVER_LOCK:
            target.activate(driver)
        args = entries[0].args
        return PlacePower(f"{args.get('model')} {args.get('host')} index {args.get('index')}",
                          driver, off_s)

    async def _power_entries(self) -> list[_Entry]:
        return [entry for entry, _ in self._entries("NetworkPowerPort")]

    async def _keep(self) -> None:
        """While the place is held: when the coordinator goes away, reconnect, acquire the
        place again (the coordinator forgot it) and follow the console to its new port."""
        while not self._closing:
            await self.session.stopping.wait()
            if self._closing:
                return
            self.say(f"place {self.spec.name}: lost the coordinator; reconnecting")
            while not self._closing:
                await asyncio.sleep(RECONNECT_S)
                try:
                    session = await self._connect()
                except PlaceError:
                    continue
                old, self.session = self.session, session
                with contextlib.suppress(Exception):
                    await old.close()
                break
            if not self._closing and not await self._regain():
                return

    async def _regain(self) -> bool:
        """Acquire the place again once the exporter is back, and find its console; False
        when someone else was quicker (`lost` says who)."""
        while not (self._closing or self.session.stopping.is_set()):
            try:
                holder = await self._holder()
                if holder is None:
                    await self._acquire()
                elif holder != self.me:
                    self._busy(holder)
                entry = await self._console()
            except PlaceBusy as error:
                self.lost = f"{error} (taken while the coordinator was away)"
                self.say(self.lost)
                return False
            except PlaceError:  # its exporter is not back yet
                await asyncio.sleep(RECONNECT_S)
                continue
            self.url = self._url_of(entry)
            self.say(f"place {self.spec.name}: acquired again; console at {self.url}")
            return True
        return True

    def close(self) -> None:
        """Release the place (if it is still ours) and stop the keeper's loop."""
        self._closing = True
        if self._watch is not None:
            self._watch.cancel()
        if self.acquired and self.lost is None:
            try:
                self._call(self._release())
                self.say(f"place {self.spec.name}: released")
            except Exception as error:  # a dead coordinator forgets it anyway: say so, go on
                self.say(f"place {self.spec.name}: not released ({_said(error)}); "
                         f"`labgrid-client -p {self.spec.name} release` does it")
        self._stop_loop()

    def _stop_loop(self) -> None:
        session = self.session
        if session is not None:
            with contextlib.suppress(Exception):
                self._call(self._close_session(session), 5.0)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()

    @staticmethod
    async def _close_session(session: Any) -> None:
        await session.stop()
        await session.close()


CHANNEL_OPTIONS = [
    ("grpc.use_local_subchannel_pool", 1),
    ("grpc.keepalive_time_ms", 10_000),           # a coordinator gone silent is noticed
    ("grpc.keepalive_timeout_ms", 10_000),        # within ~20 s ...
    ("grpc.http2.ping_timeout_ms", 10_000),       # (gRPC's own 60 s would override it)
    ("grpc.http2.max_pings_without_data", 0),     # ... also while nothing else is said
]
"""The gRPC channel of a keeper's session: a TCP connection of its own (`_own_connection`)."""


async def _own_connection(session: Any, address: str) -> None:
    """Give a ClientSession, before it starts, a TCP connection of its own. gRPC lets a
    process's channels to one target with the same options share one connection, and the
    coordinator keys its clients by the connection's peer address: the stream of a second
    session (a second place of the run) would be refused as the first one's."""
    import grpc
    from labgrid.remote.generated import labgrid_coordinator_pb2_grpc as pb2_grpc

    shared, session.channel = session.channel, grpc.aio.insecure_channel(
        target=address, options=CHANNEL_OPTIONS)
    session.stub = pb2_grpc.CoordinatorStub(session.channel)
    await shared.close()


def _said(error: BaseException) -> str:
    """labgrid's message without its `Error: ` prefix."""
    text = str(error) or type(error).__name__
    return text.removeprefix("Error: ")
