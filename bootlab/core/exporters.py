"""Exports of a boot log: an asciicast to replay it, JSON Lines to process it with other tools.

Both work line by line on any `Source`, each line stamped with its first byte's host time, and
never pass a device's escape sequence through (only SGR colours, to the asciicast player).
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections.abc import Iterator

from bootlab.core.lines import Line, LineFramer
from bootlab.core.sources import Source
from bootlab.core.stamps import parse_stamp
from bootlab.core.text import clean

_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def _timed_lines(source: Source) -> Iterator[tuple[Line, float | None]]:
    """Every line of the stream, the unterminated last one included, with its host time (s)."""
    # Whole lines only: the stream is already in memory, so no line needs cutting.
    framer = LineFramer(max_line=sys.maxsize)
    if source.session is not None:
        for t_ns, data in source.session.chunks:
            for line in framer.feed(data, t_ns):
                yield line, line.host_s
        last = framer.flush()
        if last is not None:
            yield last, last.host_s
        return
    lines = framer.feed(source.data, None)
    last = framer.flush()
    if last is not None:
        lines.append(last)
    line_time = source.line_time
    for line in lines:
        yield line, None if line_time is None else line_time(line.number, line.offset)


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
    yield json.dumps(header, ensure_ascii=False) + "\n"
    now = 0.0
    for line, host_s in _timed_lines(source):
        text = clean(line.raw, keep_sgr=True)
        if host_s is None:
            stamp = parse_stamp(_SGR.sub("", text) if "\x1b" in text else text)
            host_s = stamp.kernel_s
        if host_s is not None:
            now = max(now, host_s)
        output = text + "\r\n" if line.terminated else text
        yield json.dumps([round(now, 6), "o", output], ensure_ascii=False) + "\n"


def jsonl(source: Source) -> Iterator[str]:
    """Yield one JSON object per received line, each ending in "\\n".

    Fields: `line` (1-based number), `t` (host seconds since the start of the recording, or
    null), `epoch` (wall-clock seconds, or null when the start is not known), `b64` (the exact
    line bytes without "\\n", any "\\r" kept) and `text` (the line cleaned, safe to show). An
    unterminated last line also has `"unterminated": true`, so joining the decoded lines with
    "\\n" (and ending with one unless so marked) gives back every byte of the stream.
    """
    started = _started(source)
    for line, host_s in _timed_lines(source):
        record: dict[str, object] = {
            "line": line.number,
            "t": host_s,
            "epoch": None if started is None or host_s is None else round(started + host_s, 6),
            "b64": base64.b64encode(line.raw).decode("ascii"),
            "text": clean(line.raw),
        }
        if not line.terminated:
            record["unterminated"] = True
        yield json.dumps(record, ensure_ascii=False) + "\n"
