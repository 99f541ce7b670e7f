"""The coordinator session behind an open place: labgrid's ClientSession on an event loop of
its own thread (`Keeper`), which acquires and releases the place, finds its console and power
resources and re-acquires it after a coordinator restart.

Split from `place` so that asyncio and gRPC load only when a place is opened: `bootlab record`
on a local port does not pay for them (memory of the soak run, start-up time).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from bootlab.transports.place import (
    CALL_TIMEOUT_S,
    CONSOLE_WAIT_S,
    DRIVER_LOCK,
    EXPORTER_BACK_S,
    EXPORTER_HINT,
    INSTALL_HINT,
    RECONNECT_S,
    RELEASE_S,
    RFC2217_TIMEOUT_S,
    PlaceBusy,
    PlaceError,
    PlacePower,
    PlaceSpec,
    PlaceStale,
    PlaceUnknown,
    held_by,
    identity,
    said,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """A resource of the place, copied off the keeper's loop."""

    path: tuple[str, str, str, str]
    """exporter, group, class, resource name"""
    args: dict[str, Any]
    extra: dict[str, Any]


class Keeper:
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
            raise PlaceUnknown(f"{self.spec.coordinator}: {said(error)}") from None
        return str(place.acquired) if place.acquired else None

    async def _acquire(self) -> None:
        import grpc
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        place = self.session.get_place(self.spec.name)
        try:
            self.session.check_matches(place)
        except self.client.Error as error:
            raise PlaceError(f"place {self.spec.name}: {said(error)}") from None
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

        # fromuser: released only while it is still ours, never someone's who took it since;
        # each step bounded: a coordinator shutting down may take the request and not answer
        await self.session.stub.ReleasePlace(
            pb2.ReleasePlaceRequest(placename=self.spec.name, fromuser=self.me),
            timeout=RELEASE_S)
        await asyncio.wait_for(self.session.sync_with_coordinator(), RELEASE_S)

    def console_entry(self) -> Entry:
        """The place's console (a NetworkSerialPort) once the exporter serves it; sets `url`.

        Raises:
            PlaceError: the place has no console, or it was not served in time.
        """
        entry = self._call(self._console(), CONSOLE_WAIT_S + CALL_TIMEOUT_S)
        self.url = self._url_of(entry)
        return entry

    async def _console(self) -> Entry:
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

    def _entries(self, cls: str) -> list[tuple[Entry, bool]]:
        """The acquired resources of class `cls`, with whether each is available."""
        place = self.session.get_place(self.spec.name)
        found = []
        for path in place.acquired_resources:
            exporter, group, kind, name = path
            entry = self.session.resources.get(exporter, {}).get(group, {}).get(name)
            if kind == cls and entry is not None:
                found.append((Entry(tuple(path), dict(entry.args), dict(entry.extra)),
                              bool(entry.avail)))
        return found

    def _url_of(self, entry: Entry) -> str:
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

    async def _power_entries(self) -> list[Entry]:
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
        when someone else was quicker (`lost` says who). An exporter that does not come
        back is said to need a restart (labgrid's exits when it loses the coordinator)."""
        back = time.monotonic()
        hinted = False
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
                if not hinted and time.monotonic() - back > EXPORTER_BACK_S:
                    hinted = True
                    self.say(f"place {self.spec.name}: the coordinator is back, but the "
                             f"place's resources are not: {EXPORTER_HINT}")
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
                self._call(self._release(), 2 * RELEASE_S + 1)
                self.say(f"place {self.spec.name}: released")
            except Exception as error:  # a dead coordinator forgets it anyway: say so, go on
                self.say(f"place {self.spec.name}: not released ({said(error)}); "
                         f"`labgrid-client -p {self.spec.name} release` does it once the "
                         "coordinator is back (a coordinator that restarts forgets it anyway)")
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
