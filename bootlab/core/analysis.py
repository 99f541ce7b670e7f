"""The one pipeline from bytes to milestones, used live (`Capture`) and on files (`analyze`).

Both paths cut lines the same way, run the same `MarkerSet` and feed the same `PhaseTracker`, so
a boot analysed from its session file gives exactly the table it showed live. Most lines match
no marker: a single combined regular expression rejects them before any cleaning or stamp
parsing, which is what makes analysis fast (see bench/bench_analyze.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bootlab.core.lines import Line, LineFramer
from bootlab.core.phases import Boot, Milestone, ParsedLine, PhaseTracker, Values
from bootlab.core.prefilter import Prefilter
from bootlab.core.profiles import Marker, Profile
from bootlab.core.stamps import parse_stamp
from bootlab.core.text import clean


class MarkerSet:
    """A profile's markers, with a fast reject for lines that can match none of them."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.markers = profile.markers
        self.partial_markers = tuple(m for m in profile.markers if m.partial)
        self.prefilter = Prefilter(p.pattern for m in profile.markers for p in m.patterns)

    def candidate(self, latin1_line: str) -> bool:
        """False only when the line can match no marker (the line decoded as latin-1)."""
        return self.prefilter.candidate(latin1_line)

    def match(self, line: ParsedLine, partial: bool = False) -> list[tuple[Marker, Values]]:
        """Markers matching a line's message, with the values they extract."""
        if not self.prefilter.matchable(line.text):
            return []
        hits = []
        for marker in self.partial_markers if partial else self.markers:
            values = marker.match(line.message)
            if values is not None:
                hits.append((marker, values))
        return hits


BATCH_SCAN = 16
"""From this many lines in one read, the prefilter scans them together."""
PROMPT_LIMIT = 512
"""An unterminated line is tried against prompt markers only while it is this short."""
MATCH_LIMIT = 4096
"""Markers see at most this many bytes of a line: no milestone hides deeper in a longer one,
and a megabyte line (a board at the wrong baud rate) then costs no more than a short one."""


def parse_line(number: int, raw: bytes, host_s: float | None, offset: int = 0) -> ParsedLine:
    """Clean a line (its first MATCH_LIMIT bytes) and read the stamps it carries."""
    text = clean(raw[:MATCH_LIMIT])
    stamp = parse_stamp(text)
    return ParsedLine(number, text, text[stamp.end:], host_s, stamp.kernel_s, stamp.boot_s,
                      offset)


@dataclass
class Analysis:
    """What a stream contained: its boots and milestones."""

    profile: Profile
    boots: list[Boot]
    lines: int
    """Number of lines (counted on "\\n"; an unterminated last line counts)."""
    notices: list[str] = field(default_factory=list)
    """Things the reader had to work around (truncation, bad records)."""

    @property
    def milestones(self) -> list[Milestone]:
        """All milestones of all boots, in order."""
        return [m for boot in self.boots for m in boot.milestones]


@dataclass
class CaptureUpdate:
    """What one chunk of input produced."""

    lines: list[Line]
    milestones: list[Milestone]


class Capture:
    """Live pipeline: feed chunks as they are read, get lines and milestones back."""

    def __init__(self, profile: Profile) -> None:
        self.markers = MarkerSet(profile)
        self.tracker = PhaseTracker(profile)
        self.framer = LineFramer()
        self._last_partial_len = 0

    @property
    def boots(self) -> list[Boot]:
        """Boots seen so far."""
        return self.tracker.boots

    def feed(self, data: bytes, t_ns: int | None) -> CaptureUpdate:
        """Process one read.

        Args:
            data: the bytes read.
            t_ns: when the read returned, ns since the session start.
        """
        lines = self.framer.feed(data, t_ns)
        found: list[Milestone] = []
        candidates = self._candidates(lines) if len(lines) >= BATCH_SCAN else None
        for index, line in enumerate(lines):
            found += self._line(line, None if candidates is None else index in candidates)
        if self.markers.partial_markers and 0 < self.framer.pending_size <= PROMPT_LIMIT:
            partial = self.framer.partial
            assert partial is not None
            found += self._partial(partial)
        return CaptureUpdate(lines, found)

    def finish(self) -> CaptureUpdate:
        """End of stream: the unterminated last line is matched as a whole line."""
        last = self.framer.flush()
        if last is None:
            return CaptureUpdate([], [])
        return CaptureUpdate([last], self._line(last))

    def _candidates(self, lines: list[Line]) -> set[int]:
        """Indexes of the lines that may match, found by one scan over all of them (a read
        of many lines costs one prefilter pass, not one per line)."""
        text = "\n".join(line.raw[:MATCH_LIMIT].decode("latin-1") for line in lines) + "\n"
        starts = self.markers.prefilter.candidate_starts(text)
        line_starts: dict[int, int] = {}
        offset = 0
        for index, line in enumerate(lines):
            line_starts[offset] = index
            offset += min(len(line.raw), MATCH_LIMIT) + 1
        return {line_starts[start] for start in starts if start in line_starts}

    def _line(self, line: Line, candidate: bool | None = None) -> list[Milestone]:
        """Track one complete line; `candidate` False when a batch scan ruled it out."""
        self._last_partial_len = 0
        host_s = line.host_s
        if not self.tracker.boots:
            self.tracker.start(ParsedLine(line.number, "", "", host_s, None, None, line.offset))
        if not self.tracker.armed and (
                not candidate if candidate is not None
                else not self.markers.candidate(line.raw[:MATCH_LIMIT].decode("latin-1"))):
            return []
        parsed = parse_line(line.number, line.raw, host_s, line.offset)
        return self.tracker.feed(parsed, self.markers.match(parsed))

    def _partial(self, line: Line) -> list[Milestone]:
        # Prompts arrive without a newline; try them while short, once per new byte count.
        size = len(line.raw)
        if size == self._last_partial_len:
            return []
        self._last_partial_len = size
        if not self.tracker.boots:
            self.tracker.start(ParsedLine(line.number, "", "", line.host_s, None, None,
                                          line.offset))
        parsed = parse_line(line.number, line.raw, line.host_s, line.offset)
        hits = self.markers.match(parsed, partial=True)
        return self.tracker.feed(parsed, hits, partial=True) if hits else []


LineTime = Callable[[int, int], float | None]
"""(line number, byte offset of its first byte) -> host time in seconds, or None."""


def analyze(data: bytes, profile: Profile, line_time: LineTime | None = None) -> Analysis:
    """Find the boots and milestones in a whole stream.

    Args:
        data: the stream's bytes.
        profile: the markers to look for.
        line_time: gives each line's host time; None when the source has no host time.

    Returns:
        The analysis.
    """
    markers = MarkerSet(profile)
    tracker = PhaseTracker(profile)
    text = data.decode("latin-1")
    total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if total:
        tracker.start(ParsedLine(1, "", "", line_time(1, 0) if line_time else None, None, None))
    number, offset = 1, 0  # the line at `offset` is line `number`
    for start in markers.prefilter.candidate_starts(text):
        if start < offset:
            continue  # already fed while a fallback was armed
        number += text.count("\n", offset, start)
        offset = start
        while True:
            end = text.find("\n", offset)
            line = text[offset:] if end < 0 else text[offset:end]
            host_s = line_time(number, offset) if line_time else None
            parsed = parse_line(number, line.encode("latin-1"), host_s, offset)
            tracker.feed(parsed, markers.match(parsed))
            number += 1
            offset = len(text) if end < 0 else end + 1
            # An armed fallback needs to see the following lines too.
            if not tracker.armed or offset >= len(text):
                break
    return Analysis(profile, tracker.boots, total)


def chunk_line_time(offsets: Sequence[int], times_ns: Sequence[int]) -> LineTime:
    """A `LineTime` for a stream recorded as chunks: a line's time is its first byte's chunk's.

    Args:
        offsets: stream offset of each chunk's first byte, ascending.
        times_ns: when each chunk was read, ns since the session start.
    """

    def line_time(_number: int, offset: int) -> float | None:
        index = bisect_right(offsets, offset) - 1
        return times_ns[max(index, 0)] / 1e9 if times_ns else None

    return line_time
