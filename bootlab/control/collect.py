"""After a boot reached its goal, what the board itself knows about it, read over the shell.

The kernel's ring buffer holds every message with its printk time, also those `quiet` kept off
the console. Before reading it, and again seconds later, a sync line is written to `/dev/kmsg`
at error level, which the console prints even under `quiet`: the console gives its host time,
dmesg its printk time, and so the analysis places dmesg's messages on the session's clock and
checks the board's clock keeps time (`analysis.collected`).
dmesg crosses the serial line gzipped and in base64: a third of its size, checked by gzip's
CRC, and no line of it can be taken for a console milestone.

On a systemd board, systemd's own record of its units is read too (`systemctl show`), between
two reads of the board's monotonic clock (`/proc/uptime`) seconds apart: the clock systemd
stamps its units with, placed and checked as dmesg's is (`analysis.systemd_units`).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import re
import secrets
import shlex
import time
import zlib
from typing import Any

from bootlab.control.linux import LinuxShell
from bootlab.core.analysis.collected import SYNC_TEXT

DMESG = "dmesg | gzip -c | base64"
SYSTEMD = ("systemctl show -p Id,Description,InactiveExitTimestampMonotonic,"
           "ActiveEnterTimestampMonotonic,After '*' | gzip -c | base64")
UPTIME = "read -r up _ < /proc/uptime; echo \"uptime $up\""
CLOCKSOURCE = "cat /sys/devices/system/clocksource/clocksource0/current_clocksource"
"""The clock the kernel counts time by: a tick-counted one (jiffies) bounds nothing."""
TREE_DIR = "/proc/device-tree/bootstage"
TREE = (f"[ -d {TREE_DIR} ] && (cd {TREE_DIR} && for n in *; do printf '%s|%s|%s\\n' "
        "\"$(tr -d '\\000' < $n/name)\" \"$(od -An -tx1 $n/mark 2>/dev/null | tr -d ' \\n')\" "
        "\"$(od -An -tx1 $n/accum 2>/dev/null | tr -d ' \\n')\"; done) | gzip -c | base64")
"""U-Boot's bootstage records in the device tree it gave the kernel (`CONFIG_BOOTSTAGE_FDT`):
a node per record with its `name` and a big-endian `mark` or `accum` in microseconds."""
SYNC_SPAN_S = 2.0
"""The least time between the two sync lines: long enough that a read's granularity (about a
millisecond) cannot hide a clock running 0.1% off."""


class CollectError(Exception):
    """The board did not give what was asked; the message says what and why."""


def _sync(shell: LinuxShell) -> str:
    """Write a sync line to /dev/kmsg; its nonce."""
    nonce = secrets.token_hex(4)
    # The command's echo reads `printf '<3>bootlab sync %s\n' NONCE`: only the kernel's own
    # line has the words and the nonce side by side.
    status, output = shell.run(f"printf '<3>{SYNC_TEXT} %s\\n' {nonce} > /dev/kmsg")
    if status != 0:
        raise CollectError(f"cannot write the sync line to /dev/kmsg (exit {status}): "
                           f"{output[-200:]!r}")
    return nonce


def collect_dmesg(shell: LinuxShell, timeout: float = 120.0) -> dict[str, Any]:
    """Write a sync line, read the kernel's log, then write another sync line at least
    `SYNC_SPAN_S` after the first: the fields of a `collected` event (source, command, the
    two sync nonces, the second one's line in dmesg, text). Two moments both clocks saw,
    seconds apart, show whether the board's clock keeps the host's time
    (`analysis.boardclock`).

    Raises:
        CollectError: /dev/kmsg cannot be written, or dmesg, gzip or base64 failed.
        ShellError: the shell stopped answering.
    """
    first = _sync(shell)
    began = time.monotonic()
    text = _packed(shell, DMESG, "dmesg", timeout)
    time.sleep(max(0.0, SYNC_SPAN_S - (time.monotonic() - began)))
    last = _sync(shell)
    # dmesg was read before it: its printk time, as the kernel's log has it
    status, output = shell.run(f"dmesg | grep -F '{SYNC_TEXT} {last}'")
    if status != 0:
        raise CollectError(f"the second sync line is not in dmesg (exit {status}): "
                           f"{output[-200:]!r}")
    return {"source": "dmesg", "command": "dmesg", "sync": first, "sync_end": last,
            "sync_end_line": output.strip(), "text": text}


def _packed(shell: LinuxShell, command: str, what: str, timeout: float) -> str:
    """The text a `... | gzip -c | base64` command printed, unpacked and checked.

    Raises:
        CollectError: the command failed, or its output arrived damaged.
    """
    status, output = shell.run(command, timeout)
    if status != 0:
        raise CollectError(f"`{command}` failed (exit {status}): {output[-200:]!r}")
    try:
        text = gzip.decompress(base64.b64decode("".join(output.split()), validate=True))
    except (binascii.Error, OSError, EOFError, zlib.error) as error:
        raise CollectError(f"{what} arrived damaged ({error}); the console may drop "
                           "characters at this speed") from None
    return text.decode("utf-8", errors="replace")


def read_uptime(shell: LinuxShell) -> dict[str, Any] | None:
    """The board's CLOCK_BOOTTIME (`/proc/uptime`, which is CLOCK_MONOTONIC on a boot with no
    suspend: systemd's clock) with the host times its command was sent and its answer came
    back; None when it cannot be read."""
    status, output, sent, back = shell.timed(UPTIME)
    found = re.search(r"uptime (\d+\.\d+)", output)
    if status != 0 or found is None:
        return None
    return {"s": float(found.group(1)), "sent": sent, "back": back}


def collect_systemd(shell: LinuxShell, first: dict[str, Any] | None,
                    timeout: float = 120.0) -> dict[str, Any] | None:
    """systemd's own record of its units (`systemctl show`: when each left inactive and
    became active, on CLOCK_MONOTONIC, and what it was ordered after), and a second read of
    the board's monotonic clock to go with `first`, taken seconds before: the fields of a
    `collected` event, host times in CLOCK_MONOTONIC ns. None on a board without systemd.

    Raises:
        CollectError: `systemctl show` failed or arrived damaged.
        ShellError: the shell stopped answering.
    """
    status, _ = shell.run("command -v systemctl >/dev/null")
    if status != 0:
        return None
    text = _packed(shell, SYSTEMD, "systemctl show", timeout)
    last = read_uptime(shell)
    return {"source": "systemd", "command": "systemctl show", "text": text,
            "uptime": [read for read in (first, last) if read is not None]}


def collect_tree_bootstage(shell: LinuxShell, timeout: float = 60.0) -> dict[str, Any] | None:
    """U-Boot's bootstage records from the device tree (`TREE`): the fields of a `collected`
    event (`records`: name, and mark or accum in microseconds). None on a board whose U-Boot
    left none there.

    Raises:
        CollectError: the records arrived damaged.
        ShellError: the shell stopped answering.
    """
    status, _ = shell.run(f"[ -d {TREE_DIR} ]")
    if status != 0:
        return None
    records = []
    for line in _packed(shell, TREE, "the device tree's bootstage", timeout).splitlines():
        name, _, rest = line.partition("|")
        mark, _, accum = rest.partition("|")
        fields = {key: int(value, 16) for key, value in (("mark", mark), ("accum", accum))
                  if re.fullmatch(r"[0-9a-f]{1,16}", value)}
        if name and fields:
            records.append({"name": name, **fields})
    return {"source": "fdt", "command": TREE_DIR, "records": records} if records else None


def journal_query(pattern: str) -> str:
    """The command printing the first message of this boot's journal matching `pattern`,
    with its monotonic time (`[    12.345678] host unit[pid]: message`), or nothing."""
    return (f"journalctl -b -q --no-pager -o short-monotonic -g {shlex.quote(pattern)} "
            "| head -n 1")
