"""Network consoles (socket://, rfc2217://) and what ser2net in front of them costs the stamps.

A board farm (labgrid) exports each serial port through ser2net. ser2net holds the bytes it
reads from the port until the line has been quiet for its `chardelay` (about two characters,
at least 1 ms, at most 20 ms by default) and sends them on as one batch, so a line's first byte
reaches bootlab, and is stamped, later than on a local port. bench/bench_ser2net.py measures it
against the local pty on the same traffic; the figures below are its result (it prints the
current ones beside them).
"""

from __future__ import annotations

# Measured by bench/bench_ser2net.py --scripts boot --pace 115200 --repeat 5 (docs/benchmarks.md):
# bootlab record, the serialbench boot script paced at 115200 baud, ser2net
# 4.3.11 (Debian 12) with labgrid's connection, 2-core VM with other jobs using ~90 % of it.
# Each figure is the median over 5 runs of a run's p50 or p99 stamp error, in ms.
SER2NET_MS = {"socket": (4.32, 49.2), "rfc2217": (4.62, 32.8)}
"""(p50, p99) through ser2net with its default chardelay: raw TCP (socket://), RFC 2217."""
LOCAL_MS = (0.07, 4.0)
"""(p50, p99) of the same traffic read from the local pty."""
NODELAY_MS = (0.12, 3.75)
"""(p50, p99) through ser2net, raw TCP, with `chardelay: false`."""

_LABELS = {"socket": "raw TCP", "rfc2217": "RFC 2217"}


def network_scheme(url: str) -> str | None:
    """`socket` or `rfc2217` for a network console URL, else None."""
    scheme, is_url, _ = url.partition("://")
    return scheme.lower() if is_url and scheme.lower() in SER2NET_MS else None


def stamp_cost_note(url: str, via_ser2net: bool) -> str | None:
    """What ser2net costs the stamps of a network console, or None for a local port.

    `via_ser2net`: the port is known to be ser2net's (a labgrid place's NetworkSerialPort);
    when it is not known (a bare URL, which may as well be QEMU's socket) the note says "if".
    """
    scheme = network_scheme(url)
    if scheme is None:
        return None
    p50, p99 = SER2NET_MS[scheme]
    cost = (f"stamps through ser2net ({_LABELS[scheme]}) are late by up to ~{p99:.0f} ms "
            f"(ser2net batches bytes, chardelay): measured p50 {p50:.1f} ms, p99 {p99:.1f} ms "
            f"in bench/bench_ser2net.py, against {LOCAL_MS[0]:.2f} / {LOCAL_MS[1]:.1f} ms on a "
            f"local port; `chardelay: false` in ser2net.yaml brings them to "
            f"{NODELAY_MS[0]:.2f} / {NODELAY_MS[1]:.1f} ms")
    return f"{url}: {cost}" if via_ser2net else f"{url}: if ser2net serves this port, {cost}"
