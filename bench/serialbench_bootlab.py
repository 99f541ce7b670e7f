"""serialbench adapter for `bootlab record` (pass with `--adapters bench/serialbench_bootlab.py`).

The harness (`../shared/bench/serialbench.py`, beside the repository) launches `bootlab record
PORT --baud B --sessions WORKDIR/sessions -q` on the pty, watches the session file grow for its
handshake and drain detection, stops the recorder with SIGINT (bootlab closes and fsyncs the
session) and then asks `parse()` for the lines.

parse() reads the session files itself rather than going through `bootlab export`: the session
format is small and stable (see bootlab/core/capture/session.py), this keeps the score
independent of the exporter and of the analysis pipeline, and it needs nothing but the JSON
module. Every `rx` record is one read stamped with CLOCK_MONOTONIC when select() woke; its
string holds the bytes as latin-1 code points, so `.encode("latin-1")` gives them back exactly.
Lines are cut on b"\\n" over the concatenated stream, each stamped with the time of the read
that carried its first byte, and an unterminated last line (a prompt) is kept.

Clock: the header does not store the monotonic start, only "started" (epoch seconds of the
session start, computed from the same moment as the record times' origin), so the adapter
reports `clock = "realtime"` with `started + t / 1e9`; the harness converts realtime to its
monotonic clock with an offset it measures itself, which also gives `abs_err_ms`. With a
`start_monotonic_ns` header field the clock could be "monotonic" directly (no NTP exposure).

If a recording is split into several files (bootlab starts a new file when it sees a new boot)
the files are chained through their "split"/"continues" records, so no byte is counted twice.

`bootlab-echo` records the same way with the console echoed to stdout (`record` as typed), so
the flood's figures say what echoing costs. `bootlab-export` is a further adapter that scores
the same recording through `bootlab export --format jsonl` instead (cross-check of the
exporter).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]
_SHARED = _REPO.parent / "shared" / "bench"
if str(_SHARED) not in sys.path:
    sys.path.insert(0, str(_SHARED))

from sb_adapters import Recorder  # noqa: E402

_VENV_BOOTLAB = _REPO / ".venv" / "bin" / "bootlab"
Records = list[tuple[float | None, bytes]]


def bootlab_command() -> list[str]:
    """How to run bootlab: the project venv's entry point, else PATH, else `python -m`."""
    if _VENV_BOOTLAB.exists():
        return [str(_VENV_BOOTLAB)]
    found = shutil.which("bootlab")
    return [found] if found else [sys.executable, "-m", "bootlab"]


def _read_session(path: Path) -> tuple[dict[str, Any], list[tuple[int, bytes]], int | None]:
    """Header, rx chunks (t_ns, bytes) and split offset (or None) of one session file."""
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    header = json.loads(lines[0])
    chunks: list[tuple[int, bytes]] = []
    split: int | None = None
    for line in lines[1:]:
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a record cut off by a crash; the harness then sees the loss
        if "rx" in record:
            chunks.append((record["t"], record["rx"].encode("latin-1")))
        elif "split" in record:
            split = record["split"]
    return header, chunks, split


def session_chain(folder: Path) -> list[Path]:
    """The session files of one recording in stream order (first file, then its successors)."""
    files = sorted(folder.glob("*.jsonl"))
    if len(files) <= 1:
        return files
    by_name = {p.name: p for p in files}
    headers = {}
    for p in files:
        with p.open("rb") as handle:
            headers[p.name] = json.loads(handle.readline())
    successor = {h["continues"]: n for n, h in headers.items() if h.get("continues")}
    first = [n for n, h in headers.items() if not h.get("continues")]
    chain: list[Path] = []
    name: str | None = first[0] if first else files[0].name
    while name is not None and name in by_name and by_name[name] not in chain:
        chain.append(by_name[name])
        name = successor.get(name)
    return chain + [p for p in files if p not in chain]


def session_lines(paths: list[Path]) -> Records:
    """[(epoch seconds of the first byte, exact line bytes without b"\\n")] of a recording."""
    out: Records = []
    pending = bytearray()
    pending_t: float | None = None
    for path in paths:
        header, chunks, split = _read_session(path)
        started = float(header["started"])
        position = 0
        for t_ns, data in chunks:
            if split is not None:
                if position >= split:
                    break
                data = data[: split - position]
            position += len(data)
            t = started + t_ns / 1e9
            start, size = 0, len(data)
            while start < size:
                if not pending:
                    pending_t = t
                nl = data.find(b"\n", start)
                if nl < 0:
                    pending += data[start:]
                    break
                pending += data[start:nl]
                out.append((pending_t, bytes(pending)))
                pending.clear()
                start = nl + 1
    if pending:
        out.append((pending_t, bytes(pending)))
    return out


class Bootlab(Recorder):
    """`bootlab record` headless: per-read CLOCK_MONOTONIC stamps in a JSONL session file."""

    name = "bootlab"
    description = "bootlab record -q (session JSONL, stamp at select() wake-up; parsed directly)"
    clock = "realtime"
    settle_s = 0.2
    stop_signal = signal.SIGINT
    stop_timeout_s = 30.0  # a large session is flushed and fsynced on the way out

    def check(self) -> str | None:
        cmd = bootlab_command()
        if cmd[0] != sys.executable and not os.access(cmd[0], os.X_OK):
            return f"{cmd[0]} is not executable"
        return None

    def prepare(self, port: str, baud: int, workdir: Path) -> None:
        super().prepare(port, baud, workdir)
        self.sessions = Path(workdir) / "sessions"

    def argv(self) -> list[str]:
        return [*bootlab_command(), "record", self.port, "--baud", str(self.baud),
                "--sessions", str(self.sessions), "-q"]

    def _files(self) -> list[Path]:
        try:
            return sorted(self.sessions.glob("*.jsonl"))
        except OSError:
            return []

    def output_size(self) -> int | None:
        total = 0
        for path in self._files():
            with contextlib.suppress(OSError):
                total += path.stat().st_size
        return total

    def peek(self) -> bytes | None:
        parts = []
        for path in self._files():
            with contextlib.suppress(OSError):
                parts.append(path.read_bytes())
        return b"".join(parts)

    def parse(self) -> list[tuple[float | None, bytes | str]]:
        return list(session_lines(session_chain(self.sessions)))


class BootlabEcho(Bootlab):
    """`bootlab record` as typed: the same recording, with every line echoed to stdout (the
    harness's file) in grabserial's `[elapsed delta] text` form: what echoing costs."""

    name = "bootlab-echo"
    description = "bootlab record, echoing the console to stdout (session JSONL, parsed directly)"

    def argv(self) -> list[str]:
        return [*bootlab_command(), "record", self.port, "--baud", str(self.baud),
                "--sessions", str(self.sessions)]


class BootlabExport(Bootlab):
    """The same recording, scored through `bootlab export --format jsonl` (exporter check)."""

    name = "bootlab-export"
    description = "bootlab record -q, lines from `bootlab export --format jsonl` (epoch field)"

    def parse(self) -> list[tuple[float | None, bytes | str]]:
        recs: list[tuple[float | None, bytes | str]] = []
        for path in session_chain(self.sessions):
            out = subprocess.run([*bootlab_command(), "export", str(path), "--format", "jsonl"],
                                 capture_output=True, check=True).stdout
            for raw in out.splitlines():
                if raw.strip():
                    o = json.loads(raw)
                    recs.append((o.get("epoch"), base64.b64decode(o["b64"])))
        return recs
