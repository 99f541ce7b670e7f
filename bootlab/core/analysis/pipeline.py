"""The one pipeline from bytes to milestones, used live (`Capture`) and on files (`analyze`).

Both paths cut lines the same way, run the same `MarkerSet` and feed the same `PhaseTracker`, so
a boot analysed from its session file gives exactly the table it showed live. Most lines match
no marker: a single combined regular expression rejects them before any cleaning or stamp
parsing, which is what makes analysis fast (see bench/bench_analyze.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bootlab.core.analysis.marker_match import Hit
from bootlab.core.analysis.phases import Boot, Milestone, ParsedLine, PhaseTracker, Rejection
from bootlab.core.analysis.prefilter import MATCH_LIMIT, Prefilter
from bootlab.core.analysis.profiles import Marker, Profile
from bootlab.core.capture.lines import Line, LineBlock, LineFramer
from bootlab.core.capture.linetime import LineNumber, LineTime
from bootlab.core.capture.stamps import parse_stamp
from bootlab.core.capture.text import NOISE, clean, is_plain, match_text


class MarkerSet:
    """A profile's markers, with a fast reject for lines that can match none of them."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.markers = profile.markers
        self.partial_markers = tuple(m for m in profile.markers if m.partial)
        self.prefilter = Prefilter(p.pattern for m in profile.markers for p in m.all_patterns)
        self._known: dict[tuple[str, str | None, tuple[str, ...], bool],
                          list[tuple[Marker, Hit]]] = {}
        """What each message matched (markers read nothing else of a line): a boot prints
        the same messages every time, so a reboot loop matches each one once."""

    def candidate(self, latin1_line: str) -> bool:
        """False only when the line can match no marker (the line decoded as latin-1)."""
        return self.prefilter.candidate(latin1_line)

    def match(self, line: ParsedLine, partial: bool = False,
              candidate: bool = False) -> list[tuple[Marker, Hit]]:
        """Markers whose patterns a line's message matches, with what each found.

        `candidate`: the prefilter passed the line's bytes; a plain line need not be checked
        again (cleaning changed nothing)."""
        key = (line.message, line.undrawn, line.glued, partial)
        hits = self._known.get(key)
        if hits is None:
            hits = self._match(line, partial, candidate)
            if len(self._known) >= KNOWN_MESSAGES:
                self._known.clear()
            self._known[key] = hits
        # values are the caller's to keep: each hit gets its own copy
        return [(marker, Hit(hit.kind, hit.pattern, dict(hit.values))) for marker, hit in hits]

    def _match(self, line: ParsedLine, partial: bool,
               candidate: bool) -> list[tuple[Marker, Hit]]:
        undrawn = line.undrawn if line.undrawn and self.prefilter.matchable(line.undrawn) \
            else None
        if undrawn is None and not (candidate and line.plain) \
                and not self.prefilter.matchable(line.message):
            return []
        hits = []
        for marker in self.partial_markers if partial else self.markers:
            hit = marker.find(undrawn, partial) if undrawn else None
            hit = hit or marker.find(line.message, partial)
            for glued in line.glued if hit is None else ():
                hit = marker.find(glued)
                if hit is not None:
                    break
            if hit is not None:
                hits.append((marker, hit))
        return hits


KNOWN_MESSAGES = 65536
"""Messages whose matches a `MarkerSet` remembers (then it starts again): bounded memory on a
flood of messages that all differ."""
BULK_BYTES = 2 << 20
"""From this size on a text is scanned by RE2 (`Re2Scan`): below, Python's passes take less
than building RE2's expression (~25 ms), and the app's small analyses (a boot's settings
evidence) do not load it (~8 MB)."""
BATCH_SCAN = 16
"""From this many lines in one read, the prefilter scans them together."""
PROMPT_LIMIT = 512
"""An unterminated line is tried against prompt markers only while it is this short."""


def parse_line(number: int, raw: bytes, host_s: float | None, offset: int = 0) -> ParsedLine:
    """Clean a line (its first MATCH_LIMIT bytes) and read the stamps it carries.

    The message markers read starts after the stamp and after any power-on garbage (NUL, 0xff)
    before the board's text; a line with backspaces is also read with them kept
    (`ParsedLine.undrawn`)."""
    raw = raw[:MATCH_LIMIT]
    plain = is_plain(raw)  # most lines: cleaning would only drop a CRLF's CR
    text = raw.decode("ascii").rstrip("\r") if plain else clean(raw)
    seen = text if plain else _unnoised(text)
    stamp = parse_stamp(seen)
    message = seen[stamp.end:] if plain else seen[stamp.end:].lstrip(NOISE)
    undrawn = None
    if b"\b" in raw:
        kept = _unnoised(match_text(raw))
        undrawn = kept[parse_stamp(kept).end:].lstrip(NOISE)
    glued: tuple[str, ...] = ()
    kernel_s = stamp.kernel_s
    if message.find("[", 1) > 0:
        glued, first_s = _glued(message)
        kernel_s = first_s if kernel_s is None else kernel_s
    return ParsedLine(number, text, message, host_s, kernel_s, stamp.boot_s, offset, undrawn,
                      plain, glued)


_GLUED = re.compile(r"\[\s{0,12}\d{1,8}\.\d{6}\]")
"""A printk time inside a line: another kernel message starts there."""


def _glued(message: str) -> tuple[tuple[str, ...], float | None]:
    """The kernel messages glued after `message`'s start, and the first one's printk time."""
    messages: list[str] = []
    first_s: float | None = None
    for found in _GLUED.finditer(message, 1):
        stamp = parse_stamp(message[found.start():])
        if stamp.kernel_s is not None:
            messages.append(message[found.start() + stamp.end:])
            first_s = stamp.kernel_s if first_s is None else first_s
    return tuple(messages), first_s


_NOISY_START = re.compile(f"[^\\n]{{0,3}}[{NOISE}]+")
"""Power-on garbage: a few bytes, ending in NUL, 0xff or invalid UTF-8, before the text."""


_NOISE_SET = frozenset(NOISE)


def _unnoised(text: str) -> str:
    """`text` without the garbage a UART may put before the board's first characters."""
    if _NOISE_SET.isdisjoint(text[:4]):
        return text
    found = _NOISY_START.match(text)
    return text[found.end():] if found else text


@dataclass
class Analysis:
    """What a stream contained: its boots and milestones."""

    profile: Profile
    boots: list[Boot]
    lines: int
    """Number of lines (counted on "\\n"; an unterminated last line counts)."""
    notices: list[str] = field(default_factory=list)
    """Things the reader had to work around (truncation, bad records)."""
    rejected: list[Rejection] = field(default_factory=list)
    """Lines a milestone's pattern matched that were not taken (for `--explain`)."""

    @property
    def milestones(self) -> list[Milestone]:
        """All milestones of all boots, in order."""
        return [m for boot in self.boots for m in boot.milestones]


@dataclass
class CaptureUpdate:
    """What one chunk of input produced."""

    block: LineBlock
    """The lines it completed."""
    milestones: list[Milestone]

    @property
    def lines(self) -> list[Line]:
        """The lines it completed, as Line objects (made on demand: most readers need none)."""
        return self.block.lines()


class Capture:
    """Live pipeline: feed chunks as they are read, get lines and milestones back.

    A read is framed as one block (`LineFramer.feed_block`) and the prefilter scans the block
    as one text, so only its candidate lines become `Line`s and get parsed: a flood of lines
    that match nothing costs a few C calls per read, not Python work per line.
    """

    def __init__(self, profile: Profile, bulk: bool = False) -> None:
        self.markers = MarkerSet(profile)
        self.tracker = PhaseTracker(profile)
        self.framer = LineFramer()
        self.bulk = bulk
        """Reads are scanned by RE2 (`Re2Scan`), ~10x faster than Python's scan on a
        flood's reads: for replaying a big session, not for a live port (RE2 costs ~8 MB)."""
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
        block = self.framer.feed_block(data, t_ns)
        if block.count or block.tail is not None:
            self._last_partial_len = 0
        found = self._block(block)
        if block.tail is not None:
            found += self._line(block.tail)
        if self.markers.partial_markers and 0 < self.framer.pending_size <= PROMPT_LIMIT:
            partial = self.framer.partial
            assert partial is not None
            found += self._partial(partial)
        return CaptureUpdate(block, found)

    def finish(self) -> CaptureUpdate:
        """End of stream: the unterminated last line is matched as a whole line."""
        last = self.framer.flush()
        block = LineBlock(b"", 0, self.framer.number, self.framer.offset, None, None, last)
        return CaptureUpdate(block, [] if last is None else self._line(last))

    def _block(self, block: LineBlock) -> list[Milestone]:
        """Match a block's candidate lines, and every line while the tracker is armed (a
        fallback or a restart waits for the lines after a milestone)."""
        raw = block.raw
        if not raw:
            return []
        if not self.tracker.boots:
            first = block.line(0, block.number)
            self.tracker.start(ParsedLine(first.number, "", "", first.host_s, None, None,
                                          first.offset))
        starts = self._candidate_starts(raw, block.count)
        if starts is None:  # a line too long for one scan: line by line, each cut to size
            return [m for line in block.lines() for m in self._line(line)]
        found: list[Milestone] = []
        number, position = block.number, 0  # the line at raw[position] is line `number`
        for start in [*starts, len(raw)]:
            while self.tracker.armed and position < start:
                found += self._line(block.line(position, number), False)
                position = raw.index(b"\n", position) + 1
                number += 1
            if start < position or start == len(raw):
                continue
            number += raw.count(b"\n", position, start)
            found += self._line(block.line(start, number), True)
            position = raw.index(b"\n", start) + 1
            number += 1
        return found

    def _candidate_starts(self, raw: bytes, count: int) -> list[int] | None:
        """Where the lines of `raw` (`count` of them) the prefilter passes start: a few lines
        are checked one by one, more by one scan over all of them (which costs a pass per
        needle whatever the size); None when a line of many is longer than MATCH_LIMIT
        (markers see only its head)."""
        if count < BATCH_SCAN:
            starts, position = [], 0
            while position < len(raw):
                end = raw.index(b"\n", position)
                head = raw[position:min(end, position + MATCH_LIMIT)]
                if self.markers.candidate(head.decode("latin-1")):
                    starts.append(position)
                position = end + 1
            return starts
        if len(raw) > MATCH_LIMIT and max(map(len, raw.split(b"\n"))) > MATCH_LIMIT:
            return None
        return self.markers.prefilter.candidate_starts(raw.decode("latin-1"), raw, self.bulk)

    def _line(self, line: Line, candidate: bool | None = None) -> list[Milestone]:
        """Track one complete line; `candidate` False when a batch scan ruled it out."""
        self._last_partial_len = 0
        host_s = line.host_s
        if not self.tracker.boots:
            self.tracker.start(ParsedLine(line.number, "", "", host_s, None, None, line.offset))
        if candidate is None:
            candidate = self.markers.candidate(line.raw[:MATCH_LIMIT].decode("latin-1"))
        if not self.tracker.armed and not candidate:
            return []
        parsed = parse_line(line.number, line.raw, host_s, line.offset)
        return self.tracker.feed(parsed, self.markers.match(parsed, candidate=candidate))

    def _partial(self, line: Line) -> list[Milestone]:
        # Prompts arrive without a newline; try them while short, once per new byte count.
        size = len(line.raw)
        if size == self._last_partial_len:
            return []
        self._last_partial_len = size
        if not self.tracker.boots:
            self.tracker.start(ParsedLine(line.number, "", "", line.host_s, None, None,
                                          line.offset))
        if not self.markers.candidate(line.raw.decode("latin-1")):
            return []
        parsed = parse_line(line.number, line.raw, line.host_s, line.offset)
        hits = self.markers.match(parsed, partial=True)
        return self.tracker.feed(parsed, hits, partial=True) if hits else []


def analyze(data: bytes, profile: Profile, line_time: LineTime | None = None,
            line_number: LineNumber | None = None) -> Analysis:
    """Find the boots and milestones in a whole stream.

    Args:
        data: the stream's bytes.
        profile: the markers to look for.
        line_time: gives each line's host time; None when the source has no host time.
        line_number: the file's line number of a stream line, where the file holds lines
            that are not in the stream (grabserial's own); milestones carry the file's.

    Returns:
        The analysis.
    """
    return analyze_blocks((data,), profile, line_time, line_number)


def analyze_blocks(blocks: Iterable[bytes], profile: Profile, line_time: LineTime | None = None,
                   line_number: LineNumber | None = None) -> Analysis:
    """`analyze` on a stream given in consecutive blocks (cut anywhere): memory holds one block
    at a time, whatever the stream's size, and the result is the same as the whole stream's."""
    walk = _Walk(MarkerSet(profile), PhaseTracker(profile), line_time, line_number)
    carry, held = "", None  # a block is read once the next one is there: the last goes whole
    for block in blocks:
        if held is not None:
            carry = walk.lines_of(carry, held)
        held = block
    text = carry + (held or b"").decode("latin-1")
    walk.piece(text, held if not carry else None)
    tracker = walk.tracker
    for boot in tracker.boots:
        if boot.milestones:
            first_text = walk.first_text.get(boot.index)
            boot.text_before = first_text is not None and first_text < boot.milestones[0].offset
    return Analysis(profile, tracker.boots, walk.lines, rejected=tracker.rejected)


_TEXT = re.compile(r"\S")
"""What `str.strip` keeps: the start of text that is not blank."""


class _Walk:
    """`analyze_blocks`'s state between pieces of the stream (each ending a line, the last one
    perhaps not): the prefilter scans a piece at once; its candidate lines are matched, and
    every line while the tracker is armed (a fallback waits for the lines after a milestone)."""

    def __init__(self, markers: MarkerSet, tracker: PhaseTracker, line_time: LineTime | None,
                 line_number: LineNumber | None) -> None:
        self.markers, self.tracker = markers, tracker
        self.line_time, self.line_number = line_time, line_number
        self.lines = 0
        """Lines so far (an unterminated last line counts)."""
        self.base = 0
        """Stream offset of the piece being read."""
        self.first_text: dict[int, int] = {}
        """Boot index -> stream offset of the first non-blank text from its first line on
        (whether anything came before its first milestone, however milestones change)."""
        self._boots_done = 0
        """Boots before this one have their first text found."""

    def lines_of(self, carry: str, block: bytes) -> str:
        """Read the whole lines of `carry` + `block`; what follows the last one."""
        text = carry + block.decode("latin-1")
        cut = text.rfind("\n") + 1
        if cut == len(text):
            self.piece(text, None if carry else block)
            return ""
        self.piece(text[:cut], None)
        return text[cut:]

    def piece(self, text: str, raw: bytes | None) -> None:
        """Read the next piece (`raw`: its bytes, when at hand)."""
        if not text:
            return
        if not self.lines:
            self.tracker.start(ParsedLine(self._shown(1), "", "", self._time(1, 0), None, None))
        number = self.lines + 1  # the line at `offset` is line `number`
        offset = 0
        if self.tracker.armed:
            number, offset = self._feed(text, number, offset, False)
        bulk = len(text) >= BULK_BYTES
        for start in self.markers.prefilter.candidate_starts(text, raw, bulk=bulk):
            if start < offset:
                continue  # already fed while a fallback was armed
            number += text.count("\n", offset, start)
            number, offset = self._feed(text, number, start, True)
        # lines fed or counted, those after them, and an unterminated last one not fed
        self.lines = number - 1 + text.count("\n", offset) + (
            offset < len(text) and not text.endswith("\n"))
        self._find_first_text(text)
        self.base += len(text)

    def _feed(self, text: str, number: int, offset: int, candidate: bool) -> tuple[int, int]:
        """Feed the line at `offset`, then the next ones while the tracker is armed; the
        number and offset of the line after the last one fed."""
        while True:
            end = text.find("\n", offset)
            line = text[offset:] if end < 0 else text[offset:end]
            at = self.base + offset
            parsed = parse_line(self._shown(number), line.encode("latin-1"),
                                self._time(number, at), at)
            self.tracker.feed(parsed, self.markers.match(parsed, candidate=candidate))
            candidate = False
            number += 1
            offset = len(text) if end < 0 else end + 1
            if not self.tracker.armed or offset >= len(text):
                return number, offset

    def _time(self, number: int, offset: int) -> float | None:
        return self.line_time(number, offset) if self.line_time else None

    def _shown(self, number: int) -> int:
        return self.line_number(number) if self.line_number else number

    def _find_first_text(self, text: str) -> None:
        boots = self.tracker.boots
        while self._boots_done < len(boots):
            boot = boots[self._boots_done]
            found = _TEXT.search(text, max(boot.first_offset - self.base, 0))
            if found is None:
                return  # blank to the piece's end: look on in the next one
            self.first_text[boot.index] = self.base + found.start()
            self._boots_done += 1
