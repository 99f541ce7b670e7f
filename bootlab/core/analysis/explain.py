"""Why a standard milestone was not found: the lines nearest to it and what kept each out.

For a board nobody wrote rules for, the question after `bootlab analyze` is "which line is my
kernel load, and why was it not taken?". For every standard milestone a boot lacks, this looks
between the milestones found around it (in profile order) for two kinds of lines:

- lines a pattern of the milestone matched but the rules passed over (a device tree's read, a
  hit after the first, a bootloader line after the kernel started): the tracker's reason;
- lines that share the milestone's words (weighted by how rare each word is in the boot) but
  match none of its patterns, with the nearest cause: text before an anchored pattern, a
  difference of case, or simply other wording.

The best candidate gets a profile snippet that adds it (the same generalised pattern the app's
`u` key writes), merged into the built-in milestone rather than replacing it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bootlab.core.analysis.phases import Boot, ParsedLine
from bootlab.core.analysis.pipeline import Analysis, parse_line
from bootlab.core.analysis.profiles import Marker, Profile
from bootlab.core.analysis.usermarks import UserMarkError, pattern_for
from bootlab.core.capture.linetime import LineNumber

STANDARD = ("spl", "bootloader", "autoboot", "kernel_loaded", "starting_kernel", "decompressed",
            "linux", "calibrate", "root_wait", "ubi_attached", "root_mounted", "kernel_done",
            "init", "login")
"""The milestones every boot-time table has (when the board has the step)."""
CANDIDATES = 3
"""Lines shown per missing milestone."""
SHARED_WORDS = 2
"""Words of a milestone's patterns a line must share to be shown as near (one word, like
"device" or "kernel", is in too many lines to mean anything)."""
_WORD = re.compile(r"[a-z]{4,}")
_LITERAL = re.compile(r"(?:\\.|[^\\()\[\]{}?*+|^$.])+")
_STOP = frozenset({"with", "from", "that", "this", "into", "then", "than"})


@dataclass(frozen=True)
class Candidate:
    """A line that could have been the milestone, and why it was not."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class Missing:
    """A standard milestone a boot lacks, where it was looked for, and what was there."""

    boot: int
    id: str
    title: str
    after: tuple[str, int] | None
    """The milestone found before it (id, line): the search starts there."""
    before: tuple[str, int] | None
    """The milestone found after it: the search ends there."""
    candidates: tuple[Candidate, ...]
    suggestion: str | None
    """A profile snippet that makes the nearest line this milestone, if one looks near."""
    suggested_line: int | None = None


def explain(analysis: Analysis, data: bytes,
            line_number: LineNumber | None = None) -> list[Missing]:
    """The standard milestones each boot lacks, with their nearest lines.

    Args:
        analysis: the analysis of `data`.
        data: the stream analysed.
        line_number: how the analysis numbered the stream's lines (`Source.line_number`).
    """
    profile = analysis.profile
    raw = data.split(b"\n")
    lines = [parse_line(line_number(i) if line_number else i, text, None)
             for i, text in enumerate(raw, start=1)]
    found: list[Missing] = []
    for index, joined in enumerate(analysis.boots):
        if joined.partial:
            continue
        boot = joined.on_console()  # what the console lacks (a dmesg's lines are not its)
        last = analysis.boots[index + 1].first_line - 1 if index + 1 < len(analysis.boots) \
            else math.inf
        window = [line for line in lines if boot.first_line <= line.number <= last]
        idf = _idf(window)
        missing = [profile.by_id[i] for i in STANDARD
                   if i in profile.by_id and boot.reached(i) is None]
        near = {m.id: _near(analysis, boot, m, window, idf) for m in missing}
        # a line is shown for the milestone it is nearest to (ties: the earlier one)
        best: dict[int, tuple[float, str]] = {}
        for marker in missing:
            for score, line in near[marker.id][1]:
                if score > best.get(line.number, (0.0, ""))[0]:
                    best[line.number] = (score, marker.id)
        for marker in missing:
            (after, before, rejected), scored = near[marker.id]
            close = [line for _, line in scored if best[line.number][1] == marker.id]
            found.append(_missing(profile, boot, marker, after, before, rejected, close))
    return found


def _idf(window: Sequence[ParsedLine]) -> dict[str, float]:
    """How rare each word is among the boot's lines (rare words tell a line apart)."""
    counts = Counter(word for line in window for word in set(_WORD.findall(line.message.lower())))
    total = max(len(window), 1)
    return {word: math.log(total / count) for word, count in counts.items()}


def _neighbours(profile: Profile, boot: Boot,
                marker: Marker) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
    """The milestones found just before and just after `marker` in profile order."""
    position = profile.order[marker.id]
    reached = [m for m in boot.milestones if not m.fallback and m.id in profile.order]
    before = [m for m in reached if profile.order[m.id] < position]
    after = [m for m in reached if profile.order[m.id] > position]
    low = max(before, key=lambda m: m.line, default=None)
    high = min(after, key=lambda m: m.line, default=None)
    if low is not None and high is not None and high.line < low.line:
        high = None  # out of order (a late line of an earlier stage): search to the end
    return ((low.id, low.line) if low else None), ((high.id, high.line) if high else None)


Near = tuple[tuple[tuple[str, int] | None, tuple[str, int] | None, list[Candidate]],
             list[tuple[float, ParsedLine]]]


def _near(analysis: Analysis, boot: Boot, marker: Marker, window: Sequence[ParsedLine],
          idf: dict[str, float]) -> Near:
    """Where to look (the milestones found around it), the hits the rules passed over there,
    and the other lines there sharing the marker's words, nearest first."""
    after, before = _neighbours(analysis.profile, boot, marker)
    low = after[1] if after else boot.first_line
    high = before[1] if before else math.inf
    rejected = [Candidate(r.line, r.text.strip(), r.reason) for r in analysis.rejected
                if r.boot == boot.index and r.marker == marker.id and low <= r.line <= high]
    taken = {c.line for c in rejected} | {m.line for m in boot.milestones}
    words = _words(marker)
    scored = []
    for line in window:
        if not low <= line.number <= high or line.number in taken:
            continue
        shared = words & set(_WORD.findall(line.message.lower()))
        if len(shared) >= SHARED_WORDS:
            scored.append((sum(idf.get(w, 0.0) for w in shared), line))
    scored.sort(key=lambda pair: -pair[0])
    return (after, before, rejected), scored


def _missing(profile: Profile, boot: Boot, marker: Marker, after: tuple[str, int] | None,
             before: tuple[str, int] | None, rejected: list[Candidate],
             close: list[ParsedLine]) -> Missing:
    close = close[:CANDIDATES]
    words = _words(marker)
    candidates = rejected[:CANDIDATES] + [
        Candidate(line.number, line.text.strip(), _why(marker, line.message, words))
        for line in close][:max(0, CANDIDATES - len(rejected))]
    suggestion, suggested = None, None
    for line in close:
        try:
            suggestion = snippet(profile, marker, pattern_for(line.message))
        except UserMarkError:
            continue
        suggested = line.number
        break
    return Missing(boot.index, marker.id, marker.title, after, before, tuple(candidates),
                   suggestion, suggested)


def _words(marker: Marker) -> set[str]:
    """The words a marker's patterns spell out literally (what its lines say)."""
    words: set[str] = set()
    for pattern in (*marker.patterns, *marker.weak):
        for literal in _LITERAL.findall(re.sub(r"\(\?P<\w+>|\(\?[:!=]", "(", pattern.pattern)):
            words.update(w for w in _WORD.findall(literal.replace("\\", " ").lower())
                         if w not in _STOP)
    return words


def _why(marker: Marker, message: str, words: Iterable[str]) -> str:
    """The nearest cause a line matched none of the marker's patterns."""
    for pattern in (*marker.patterns, *marker.weak):
        text = pattern.pattern
        if text.startswith("^"):
            loose = re.compile(text[1:], pattern.flags)
            found = loose.search(message)
            if found is not None and found.start() > 0:
                return (f"{message[:found.start()].strip()!r} comes before the text {marker.id}'s "
                        f"pattern {text!r} expects at the start of the line")
        if re.compile(text, pattern.flags | re.IGNORECASE).search(message):
            return f"it differs only in upper or lower case from {marker.id}'s pattern {text!r}"
    shared = sorted(w for w in words if w in message.lower())
    return (f"no {marker.id} pattern matches this wording (it shares "
            f"{', '.join(shared) or 'nothing'} with them)")


def snippet(profile: Profile, marker: Marker, pattern: str) -> str:
    """The lines of a user profile that add `pattern` to `marker` (created extending
    `profile` when it has no file of the user's yet)."""
    quoted = "'" + pattern + "'" if "'" not in pattern else '"' + pattern.replace(
        "\\", "\\\\").replace('"', '\\"') + '"'
    head = ("" if not profile.source.startswith("<built-in") else
            f'[profile]\nname = "{profile.name}"\nextends = "{profile.name}"\n\n')
    return (f'{head}[[milestone]]\nid = "{marker.id}"\nmerge = true\n'
            f"match = [{quoted}]\n")
