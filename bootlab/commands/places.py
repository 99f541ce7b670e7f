"""A labgrid place where a command takes a port: which one the options and LG_PLACE name, and
opening it for the length of the command (`transports.place` does the labgrid part); for
`bootlab ab`, several places (each `--place`, and the free places `--place-tag` matches), all
held in one ExitStack."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bootlab.exitcodes import BAD_INPUT, PORT_FAILED
from bootlab.transports.place import OpenPlace as OpenPlace
from bootlab.transports.place import (
    PlaceBusy,
    PlaceError,
    PlaceSpec,
    PlaceUnknown,
    coordinator_of,
    held_by,
    identity,
    open_place,
    place_spec,
    sigterm_interrupts,
    tagged_places,
)

DEFAULT_BAUD = 115200
PREFIX = "place:"
"""`place:NAME` is a place's name where a port is given; sessions store it as their port."""


def resolve(args: argparse.Namespace) -> PlaceSpec | None:
    """The place the command is to use, its `place:NAME` made `args.port` (the port its
    sessions store); None when `args.port` is a port (its `--baud` is then 115200 unless
    given). A port given, or `place:NAME`, wins over LG_PLACE.

    Raises:
        ValueError: both a port and --place, or neither (and no LG_PLACE).
    """
    port = args.port or ""
    coordinator, release_stale = args.coordinator, args.release_stale
    if port.startswith(PREFIX):
        spec: PlaceSpec | None = place_spec(port[len(PREFIX):], coordinator, release_stale)
    elif port and args.place:
        raise ValueError(f"give a port ({port}) or --place {args.place}, not both")
    elif port:
        args.baud = args.baud or DEFAULT_BAUD
        return None
    else:
        spec = place_spec(args.place, coordinator, release_stale)
    if spec is None:
        raise ValueError("give a port (a device path or URL), or --place NAME (or set LG_PLACE)")
    args.port = PREFIX + spec.name
    return spec


def exit_code(error: PlaceError) -> int:
    """A place that does not exist (or no labgrid) is bad input; busy, stale or unreachable is
    a port that failed."""
    return BAD_INPUT if isinstance(error, PlaceUnknown) else PORT_FAILED


def session_meta(place: OpenPlace) -> dict[str, Any]:
    """What a session records of the place its bytes came from."""
    return {"place": place.name, "source": place.source}


def enter(stack: contextlib.ExitStack, spec: PlaceSpec, args: argparse.Namespace,
          say: Callable[[str], None]) -> OpenPlace:
    """Open the place in `stack` (released when it closes; SIGTERM meanwhile interrupts as
    Ctrl-C does), and make `args.port` its `place:NAME`, the port its sessions store.

    Raises:
        PlaceError: as `open_place`.
    """
    stack.enter_context(sigterm_interrupts())
    place = stack.enter_context(open_place(spec, say=say, power_off_s=args.power_off))
    args.baud = args.baud or place.baud
    return place


@dataclass(frozen=True)
class Wanted:
    """The places of one `ab` run: those named, then every free place carrying all `tags`."""

    names: tuple[str, ...]
    tags: tuple[tuple[str, str], ...]
    coordinator: str
    release_stale: bool

    def spec(self, name: str) -> PlaceSpec:
        return PlaceSpec(name, self.coordinator, self.release_stale)


def wanted(args: argparse.Namespace) -> Wanted | None:
    """The places `ab` is to use: `place:NAME` ports, each `--place`, `--place-tag`, else
    LG_PLACE; None when the ports are local ones (their `--baud` is then 115200 unless given).
    With named places `args.port` becomes the first one's `place:NAME`.

    Raises:
        ValueError: local ports and places together, a place twice, a bad tag, or nothing.
    """
    ports = [port for port in (args.port, *args.also_port) if port]
    local = [port for port in ports if not port.startswith(PREFIX)]
    names = [port[len(PREFIX):] for port in ports if port.startswith(PREFIX)] + args.place
    tags = tuple(_tag(text) for text in args.place_tag)
    if local and (names or tags):
        raise ValueError(f"give ports ({' '.join(local)}) or places (--place, --place-tag), "
                         "not both")
    if local:
        args.baud = args.baud or DEFAULT_BAUD
        return None
    if not names and not tags:
        spec = place_spec(None, args.coordinator, args.release_stale)
        if spec is None:
            raise ValueError("give a port (a device path or URL), --place NAME (repeatable), "
                             "--place-tag KEY=VALUE, or set LG_PLACE")
        names = [spec.name]
    if len(set(names)) != len(names):
        raise ValueError(f"a place is given twice: {' '.join(names)}")
    if names:
        args.port = PREFIX + names[0]
    return Wanted(tuple(names), tags, coordinator_of(args.coordinator), args.release_stale)


def _tag(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not (key and sep):
        raise ValueError(f"--place-tag {text!r}: give KEY=VALUE (as labgrid-client set-tags)")
    return key, value


def enter_all(stack: contextlib.ExitStack, places: Wanted, args: argparse.Namespace,
              say: Callable[[str], None]) -> list[OpenPlace]:
    """Open every place of the run in `stack` (all released when it closes; SIGTERM meanwhile
    interrupts as Ctrl-C does): the named ones, then the free ones the tags match (one taken
    since it was listed is left out). `args.port` becomes the first one's `place:NAME`.

    Raises:
        PlaceError: as `open_place`, for a named place (the message says which of the run's
            places it is), or no place of the tags is free.
    """
    stack.enter_context(sigterm_interrupts())
    names = [*places.names, *(name for name in _free_tagged(places, say)
                              if name not in places.names)]
    opened: list[OpenPlace] = []
    for name in names:
        try:
            opened.append(stack.enter_context(
                open_place(places.spec(name), say=say, power_off_s=args.power_off)))
        except PlaceBusy as error:
            if name not in places.names:
                say(f"{error}: taken since the coordinator listed it; going on without it")
                continue
            _among(error, name, names)
            raise
        except PlaceError as error:
            _among(error, name, names)
            raise
    if not opened:
        raise PlaceError(f"no place with {_tags_text(places)} is free any more")
    args.port = PREFIX + opened[0].name
    return opened


def _among(error: PlaceError, name: str, names: list[str]) -> None:
    """Say in `error` which of the run's places failed (nothing is booted before all are
    held)."""
    if len(names) > 1:
        error.args = (f"{error} ({name}: place {names.index(name) + 1} of the run's "
                      f"{len(names)}, {', '.join(names)}; nothing was booted)",)


def _free_tagged(places: Wanted, say: Callable[[str], None]) -> list[str]:
    """The places carrying every tag that nobody holds (or, with --release-stale, that we
    hold here); those held are named.

    Raises:
        PlaceUnknown: no place carries the tags.
        PlaceError: every such place is held (by whom), and no place was named.
    """
    if not places.tags:
        return []
    found = tagged_places(places.coordinator, dict(places.tags))
    if not found:
        raise PlaceUnknown(f"no place of {places.coordinator} has {_tags_text(places)} (a "
                           "place's tags: labgrid-client -p NAME set-tags KEY=VALUE)")
    me = identity()
    free = [name for name, holder in found.items()
            if holder is None or (holder == me and places.release_stale)]
    held = [f"{name} by {held_by(holder)}" for name, holder in found.items()
            if holder is not None and name not in free]
    if not free and not places.names:
        raise PlaceError(f"every place with {_tags_text(places)} is held: {', '.join(held)}")
    if held:
        say(f"places with {_tags_text(places)} left out, being held: {', '.join(held)}")
    return free


def _tags_text(places: Wanted) -> str:
    return "tags " + ",".join(f"{key}={value}" for key, value in places.tags)
