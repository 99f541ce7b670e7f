"""Time zero: the moment bootlab itself started a boot, so its table can start at power-on.

A session knows it only from what bootlab stamped with the host clock as it did it: a
`power` event switching a place's power on (`bootlab record --place`, or a reboot through
the place) or stamped at the start of `--power-on-cmd`, a `reset` event releasing a DTR or
RTS reset line (`--reboot dtr`/`rts`), or, in a session bootlab started for a boot (`role:
boot`: `bootlab boot`, `ab`, `tune`, the app's reboot), the first line it typed there
(`reset` or `boot` at U-Boot, `reboot -f` at a shell), at the moment its Enter was sent.
Nothing is guessed: a boot powered by hand or by a `--power-cmd` power-cycle command (when
in it the power came back is not known), a log file, a boot that began by itself after
another, or one with a gap between time zero and its first line gets no time zero, and
`Boot.zero_unknown` says why; its table counts from its first byte as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bootlab.core.analysis.phases import Boot, BootGap, TimeZero
from bootlab.core.capture.session import Session

NO_LOG_ZERO = "a log holds no record of when the board was powered on or reset"
PASSIVE = ("bootlab did not start this boot (a passive recording: the board was powered or "
           "reset by hand or by itself), so when it started is not on record")
UNSTAMPED = ("bootlab restarted the board by a means whose moment it does not stamp (a "
             "--power-cmd power-cycle command, which does not say when in it the power came "
             "back: --power-off-cmd with --power-on-cmd would; or a person), so when it "
             "started is not on record")
CUT_SHORT_NS = 1_000_000_000
"""A boot beginning this soon after a power-on command returned, cutting short one that
began while it ran, is the one the command started (`Recorder._started_by`)."""
MOVED = "zero_moved"
"""The event a session gets when the power-on stamped in it started the next session's boot
instead of its own (its boot was cut short by the one the switch started)."""
PRINTING_NS = 500_000_000
"""Bytes set apart this close before a power-on command's start: the board was printing when
it ran, so its output may go on until the switch comes."""
INDEXED = ("a session this big is read through its index, which keeps no power or typed "
           "records")


def starts_boot(kind: str, fields: Mapping[str, Any]) -> bool:
    """Whether a stamped event starts a boot: a power switch turned on, or a reset line (DTR
    or RTS) released."""
    return (kind == "power" and fields.get("state") == "on") or kind == "reset"


def power_on(events: Iterable[Mapping[str, Any]], meta: Mapping[str, Any],
             before: Sequence[tuple[int, bytes]] = ()) -> TimeZero | None:
    """The last power-on or reset release bootlab stamped in the session (the recorder's zero
    too). `before`: the bytes set apart as arriving before it, which tell whether the board
    was printing when a power-on command ran (`TimeZero.unsure_until_s`)."""
    found = None
    for event in events:
        t, kind = event.get("t"), str(event.get("event"))
        if starts_boot(kind, event) and isinstance(t, int):
            what = "power-on" if kind == "power" else "reset"
            ran = event.get("ran_ms")  # a command's start: the switch came within its run
            within = f", which ran {ran:g} ms from here: the power came on within them" \
                if isinstance(ran, (int, float)) else ""
            unsure = (t + ran * 1e6) / 1e9 if isinstance(ran, (int, float)) and any(
                t - PRINTING_NS <= at <= t for at, _ in before) else None
            found = (t, f"{what} via {event.get('via') or 'the power switch'}{within}", unsure)
    if found is None:
        return None
    place = meta.get("place")
    where = f" (place {place})" if isinstance(place, str) and place else ""
    return TimeZero(found[0] / 1e9, f"{found[1]}{where}", found[2])


def typed(sent: Sequence[tuple[int, bytes | int]]) -> TimeZero | None:
    """The first line typed in the session, at its Enter: the reset or boot command a boot
    session starts with. None when the session starts with a password (never a command)."""
    text = b""
    for t, data in sent:
        if isinstance(data, int):
            return None
        for end, byte in enumerate(data):
            if byte in b"\r\n":
                command = (text + data[:end]).decode("latin-1").strip()
                return TimeZero(t / 1e9, f"`{command}` typed by bootlab") if command else None
        text += data
    return None


def session_zero(meta: Mapping[str, Any], session: Session | None) -> TimeZero | str:
    """A session's time zero, or why it has none."""
    if session is None:
        return INDEXED
    zero = power_on(session.events, meta, session.before)
    moved = next((e for e in session.events if e.get("event") == MOVED), None)
    if zero is not None and moved is not None:
        return (f"the {zero.what} started the next boot (session {moved.get('next')}), "
                "which cut this one short: this one began before the switch came")
    if zero is not None:
        return zero
    if meta.get("role") != "boot":
        return PASSIVE
    if meta.get("restarted_by"):  # a power command, a person: what it typed came later
        return UNSTAMPED
    return typed(session.sent) or UNSTAMPED


def _withheld(boot: Boot, zero: TimeZero, gaps: Sequence[BootGap]) -> str | None:
    """Why `zero` cannot count for `boot`: a gap between them, or a boot that began before."""
    first = next((m.host_s for m in boot.milestones if m.host_s is not None), None)
    if first is not None and first < zero.at_s:
        return (f"its first milestone came before the {zero.what} at {zero.at_s:.3f} s, "
                "which is not its start")
    began = boot.start_host_s if boot.start_host_s is not None else first
    if zero.unsure_until_s is not None and began is not None and began < zero.unsure_until_s:
        return (f"the board was printing when the power-on command ran, and this boot's first "
                f"line came {(began - zero.at_s) * 1e3:.0f} ms into its "
                f"{(zero.unsure_until_s - zero.at_s) * 1e3:.0f} ms run, before the switch is "
                "known to have come: it may be the earlier boot still running")
    start = first if boot.start_host_s is None else max(boot.start_host_s, zero.at_s)
    lost = next((g for g in gaps if (start is None or g.at_s < start) and (
        g.at_s >= zero.at_s or g.seconds is None or g.at_s + g.seconds > zero.at_s)), None)
    if lost is None and boot.gap is not None and boot.gap.start_lost:
        lost = boot.gap
    if lost is None:
        return None
    return (f"the port was lost at {lost.at_s:.3f} s, between time zero ({zero.what}) and its "
            "first line: nothing is measured from time zero across the gap")


def mark(boots: Sequence[Boot], zero: TimeZero | str, gaps: Sequence[BootGap] = ()) -> None:
    """Give the session's first whole boot its time zero (bootlab started that one only), or
    say on each boot why it has none. Run after `gaps.mark`."""
    first = next((b for b in boots if not b.partial), None)
    for boot in boots:
        if boot.partial:
            continue
        if isinstance(zero, str):
            boot.zero_unknown = zero
        elif first is not None and boot is not first:
            boot.zero_unknown = (f"it began by itself after boot {first.index}: bootlab "
                                 f"started only that one ({zero.what})")
        elif (why := _withheld(boot, zero, gaps)) is not None:
            boot.zero_unknown = why
        else:
            boot.zero = zero
