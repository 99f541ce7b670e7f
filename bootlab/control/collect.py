"""After a boot reached its goal, what the board itself knows about it, read over the shell.

The kernel's ring buffer holds every message with its printk time, also those `quiet` kept off
the console. Before reading it, a sync line is written to `/dev/kmsg` at error level, which
the console prints even under `quiet`: the console gives its host time, dmesg its printk time,
and so the analysis places dmesg's messages on the session's clock (`analysis.collected`).
dmesg crosses the serial line gzipped and in base64: a third of its size, checked by gzip's
CRC, and no line of it can be taken for a console milestone.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import secrets
import zlib
from typing import Any

from bootlab.control.linux import LinuxShell
from bootlab.core.analysis.collected import SYNC_TEXT

DMESG = "dmesg | gzip -c | base64"


class CollectError(Exception):
    """The board did not give what was asked; the message says what and why."""


def collect_dmesg(shell: LinuxShell, timeout: float = 120.0) -> dict[str, Any]:
    """Write the sync line, then read the kernel's log: the fields of a `collected` event
    (source, command, sync nonce, text).

    Raises:
        CollectError: /dev/kmsg cannot be written, or dmesg, gzip or base64 failed.
        ShellError: the shell stopped answering.
    """
    nonce = secrets.token_hex(4)
    # The command's echo reads `printf '<3>bootlab sync %s\n' NONCE`: only the kernel's own
    # line has the words and the nonce side by side.
    status, output = shell.run(f"printf '<3>{SYNC_TEXT} %s\\n' {nonce} > /dev/kmsg")
    if status != 0:
        raise CollectError(f"cannot write the sync line to /dev/kmsg (exit {status}): "
                           f"{output[-200:]!r}")
    status, output = shell.run(DMESG, timeout)
    if status != 0:
        raise CollectError(f"`{DMESG}` failed (exit {status}): {output[-200:]!r}")
    try:
        text = gzip.decompress(base64.b64decode("".join(output.split()), validate=True))
    except (binascii.Error, OSError, EOFError, zlib.error) as error:
        raise CollectError(f"dmesg arrived damaged ({error}); the console may drop "
                           "characters at this speed") from None
    return {"source": "dmesg", "command": "dmesg", "sync": nonce,
            "text": text.decode("utf-8", errors="replace")}
