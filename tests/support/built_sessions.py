"""Sessions built by a test: reads at chosen times, kernel lines with printk times, and the
session or log read back as the commands read it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bootlab.core.analysis import loading
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.capture.sources import Source

Chunk = tuple[float, bytes]


def write_session(path: Path, chunks: Sequence[Chunk],
                  records: Sequence[dict[str, Any]] = (), **meta: Any) -> Path:
    """A session file holding `chunks` as reads (seconds, bytes), and `records` (events, sent
    bytes: `t` in ns) in time order among them, with header `meta`."""
    header = {"format": "bootlab-session", "version": 1, "started": 1.8e9, "label": "",
              "board": "built", "port": "/dev/ttyUSB0", "baud": 115200, "profile": "linux",
              **meta}
    body = [{"t": round(t * 1e9), "rx": data.decode("latin-1")} for t, data in chunks]
    body = sorted([*body, *records], key=lambda record: int(record["t"]))
    path.write_text("\n".join(json.dumps(r) for r in [header, *body]) + "\n")
    return path


def lines(*timed: tuple[float, str]) -> list[Chunk]:
    """One read per line, each ending in CR LF as a serial console sends it."""
    return [(t, text.encode() + b"\r\n") for t, text in timed]


def kernel(offset: float, *stamped: tuple[float, str], arrive: float | None = None) -> list[Chunk]:
    """printk lines arriving live at offset + printk time, or all from `arrive` 0.1 ms apart."""
    out = []
    for i, (k, text) in enumerate(stamped):
        t = offset + k if arrive is None else arrive + i * 1e-4
        out += lines((t, f"[{k:12.6f}] {text}"))
    return out


def load(path: Path) -> tuple[Source, Analysis]:
    """A session or log read and analysed as every command does (`loading.load`)."""
    loaded = loading.load(path)
    return loaded.source, loaded.analysis
