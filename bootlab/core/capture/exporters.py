"""Exports of a boot log: an asciicast to replay it, JSON Lines to process it with other tools.

Both work line by line on any `Source`, each line stamped with its first byte's host time, and
never pass a device's escape sequence through (only SGR colours, to the asciicast player).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator

from bootlab.core.capture.sources import Source
from bootlab.core.capture.stamps import parse_stamp
from bootlab.core.capture.text import clean, is_plain

_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def _timed_lines(source: Source) -> Iterator[tuple[int, bytes, bool, float | None]]:
    """Every line of the stream: number, exact bytes, whether "\\n" ended it, host time (s).

    The time is the first byte's (`Source.line_time`; for a session, the read that brought it).
    The unterminated last line is included.
    """
    lines = source.data.split(b"\n")
    last = lines.pop()  # b"" when the stream ends with "\n"
    line_time = source.line_time
    offset = 0
    for number, raw in enumerate(lines, start=1):
        yield number, raw, True, None if line_time is None else line_time(number, offset)
        offset += len(raw) + 1
    if last:
        number = len(lines) + 1
        yield number, last, False, None if line_time is None else line_time(number, offset)


def _clean(raw: bytes, keep_sgr: bool = False) -> str:
    """`text.clean`, with a shortcut for the common line that needs no cleaning."""
    if is_plain(raw):
        return raw.decode("ascii").removesuffix("\r")
    return clean(raw, keep_sgr)


def _number(value: float | None) -> str:
    return "null" if value is None else repr(value)


def _started(source: Source) -> float | None:
    """Wall-clock time (epoch seconds) of the recording's start, when the log says."""
    started = source.meta.get("started")
    if isinstance(started, int | float) and not isinstance(started, bool):
        return float(started)
    return None


def asciicast(source: Source, width: int = 120, height: int = 40) -> Iterator[str]:
    """Yield an asciicast v2 recording of the log, one file line (ending in "\\n") at a time.

    The header carries the size, the title (label and board, or the file name) and, for
    sessions, the start as `timestamp`. Then one output event per received line at the host
    time of its first byte: the line's text cleaned with SGR colours kept, then "\\r\\n" (none
    after an unterminated last line, e.g. a prompt). Lines are cleaned whole, so an escape
    sequence split across reads cannot slip through. Logs without host times (plain captures,
    dmesg) are played on the kernel's printk clock: each stamped line at its printk time, other
    lines at the time of the line before (0 before the first stamp). Times never go backwards.
    """
    header: dict[str, object] = {"version": 2, "width": width, "height": height}
    started = _started(source)
    if started is not None:
        header["timestamp"] = int(started)
    names = [str(source.meta.get(key) or "") for key in ("label", "board")]
    header["title"] = clean(" - ".join(name for name in names if name) or source.path.name)
    yield json.dumps(header) + "\n"
    now = 0.0
    for _, raw, terminated, host_s in _timed_lines(source):
        text = _clean(raw, keep_sgr=True)
        if host_s is None:
            stamp = parse_stamp(_SGR.sub("", text) if "\x1b" in text else text)
            host_s = stamp.kernel_s
        if host_s is not None:
            now = max(now, host_s)
        output = text + "\r\n" if terminated else text
        yield json.dumps([round(now, 6), "o", output]) + "\n"


def jsonl(source: Source) -> Iterator[str]:
    """Yield one JSON object per received line, each ending in "\\n".

    Fields: `line` (1-based number), `t` (host seconds since the start of the recording, or
    null), `epoch` (wall-clock seconds, or null when the start is not known), `b64` (the exact
    line bytes without "\\n", any "\\r" kept) and `text` (the line cleaned, safe to show). An
    unterminated last line also has `"unterminated": true`, so joining the decoded lines with
    "\\n" (and ending with one unless so marked) gives back every byte of the stream.
    """
    started = _started(source)
    for number, raw, terminated, host_s in _timed_lines(source):
        if host_s is not None:
            host_s = round(host_s, 9)  # ns, as recorded; no float noise from summed deltas
        epoch = None if started is None or host_s is None else round(started + host_s, 6)
        # Written out by hand: json.dumps of a dict per line would take most of the time.
        yield (f'{{"line":{number},"t":{_number(host_s)},"epoch":{_number(epoch)},'
               f'"b64":"{base64.b64encode(raw).decode("ascii")}","text":{json.dumps(_clean(raw))}'
               + ("}\n" if terminated else ',"unterminated":true}\n'))
