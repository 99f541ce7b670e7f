"""The whole-text scans of the prefilter: RE2's loosened patterns find every line Python's exact
patterns match, and both scans (RE2 for files, Python live) find the same milestones."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import re2
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bootlab.core.analysis.linescan import Re2Scan
from bootlab.core.analysis.pipeline import (
    BULK_BYTES,
    Capture,
    MarkerSet,
    analyze,
    analyze_blocks,
    parse_line,
)
from bootlab.core.analysis.prefilter import Prefilter
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.analysis.regex_parse import NotForRe2, loosened
from bootlab.core.capture.text import clean, clean_lines

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "logs"
PROFILES = [load_profile("linux"), load_profile("resume")]
PATTERNS = sorted({p.pattern for profile in PROFILES for m in profile.markers
                   for p in m.all_patterns})
_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1
_OPTIONS.log_errors = False
ASCII_LINE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t"),
                     max_size=30)


def _re2(pattern: str) -> object:
    return re2.compile(loosened(pattern), _OPTIONS)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_profile_pattern_loosens_into_re2(pattern: str) -> None:
    _re2(pattern)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
          max_examples=300, deadline=None)
@given(data=st.data(), before=ASCII_LINE, after=ASCII_LINE)
def test_a_loosened_pattern_matches_wherever_the_pattern_does(data: st.DataObject, before: str,
                                                              after: str) -> None:
    pattern = data.draw(st.sampled_from(PATTERNS))
    try:
        body = data.draw(st.from_regex(pattern, fullmatch=False, alphabet=st.characters(
            min_codepoint=0x09, max_codepoint=0x7E, exclude_characters="\n\x0b\x0c\r")))
    except Exception:  # a pattern hypothesis cannot generate from (a lookbehind)
        assume(False)
        raise
    line = before + body + after if not pattern.startswith("^") else body + after
    assume("\n" not in line and re.search(pattern, line) is not None)
    assert _re2(pattern).search(line.encode()) is not None, (pattern, line)


@pytest.mark.parametrize(("pattern", "line"), [
    (r"^U-Boot(?! SPL) (?P<v>\w+)", "U-Boot SPL"),           # lookahead dropped: a superset
    (r"(?<=ab)c", "xc"),                                      # lookbehind dropped
    (r"(a)\1z", "a--z"),                                       # a backreference: anything
    (r"x{,3}y++z", "yyz"),                                    # Python's {,n}, a possessive
    (r"(?>a+)b", "aab"),                                      # atomic
    (r"\S{1,2000}!", "abc!"),                                 # past RE2's count limit
    (r"(?i)kernel READY$", "KERNEL ready"),
    (r"(x)?(?(1)a|b)c", "bc"),                                # a conditional: either branch
])
def test_loosened_forms(pattern: str, line: str) -> None:
    assert _re2(pattern).search(line.encode()) is not None


def test_a_loosened_pattern_never_crosses_a_line_end() -> None:
    # every character class loses the newline (Python's [^x] and \s have it)
    for pattern in (r"foo[^x]bar", r"foo\sbar", r"foo\nbar", r"(a)\1b", r"foo.bar"):
        assert _re2(pattern).search(b"foo\nbar\na\nb\n") is None, pattern


def test_a_pattern_re2_cannot_hold_is_scanned_by_python() -> None:
    with pytest.raises(NotForRe2):
        loosened("✓ ready")
    # an empty match (a lookahead alone) would be everywhere; a character past 0xff
    scan = Re2Scan([r"^Starting kernel", r"(?=x)y?", "✓ ready", r"^(?:)"])
    text = "Starting kernel\nzzz\nx\n"
    assert {0, 16, 20} <= scan.starts(text, text.encode())  # ^(?:) matches every line


def _exact_lines(data: bytes, markers: MarkerSet) -> set[int]:
    """Starts of the lines some marker matches, found line by line the slow way."""
    found, start = set(), 0
    for raw in data.split(b"\n"):
        if markers.match(parse_line(1, raw, None)):
            found.add(start)
        start += len(raw) + 1
    return found


LINES = [b"U-Boot 2024.01 (Jan 01 2024 - 00:00:00 +0000)\r", b"Starting kernel ...\r",
         b"\x1b[0;32m[  OK  ]\x1b[0m Reached target \x1b[1mMulti-User System\x1b[0m.",
         b"Welcome to \x1b[1mDebian GNU/Linux 12 (bookworm)\x1b[0m!",
         b"\xe2\x80\xa6 Run /sbin/init as init process", b"caf\xc3\xa9 login: ",
         b"\xff\xffU-Boot SPL 2019.10 (Oct 01 2019 - 00:00:00)",
         b"[    1.000000] Freeing unused kernel memory: 1024K", b"plain line",
         b"Hit any key to stop autoboot:  3 \x08\x08\x08 2 ", b"progress 10%\r20%\rdone",
         b"\x1b]0;title\x07board login: ", b"[    0.000000] Booting Linux on physical CPU 0x0",
         b"MESS:00:00:05.383436:0: arasan: arasan_emmc_open", b"\x00\x00Starting kernel ...",
         b"\xd0\x9f\xd1\x80\xd0\xb8 Booting Linux", b"\x1b[1mGNU GRUB  version 2.06\x1b[0m"]


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=25))
def test_both_scans_find_every_line_a_marker_matches(lines: list[bytes]) -> None:
    markers = MarkerSet(PROFILES[0])
    data = b"\n".join(lines)
    exact = _exact_lines(data, markers)
    for bulk in (False, True):
        starts = set(markers.prefilter.candidate_starts(data.decode("latin-1"), data, bulk=bulk))
        assert exact <= starts, bulk


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.log")), ids=lambda p: p.name[:40])
def test_on_real_logs_re2_passes_every_matching_line_and_few_others(path: Path) -> None:
    markers = MarkerSet(PROFILES[0])
    data = path.read_bytes()
    exact = _exact_lines(data, markers)
    text = data.decode("latin-1")
    bulk = set(markers.prefilter.candidate_starts(text, data, bulk=True))
    python = set(markers.prefilter.candidate_starts(text, data))
    assert exact <= bulk and exact <= python
    # whole patterns, not needles: RE2 lets through no more lines than Python's scan
    assert len(bulk - exact) <= len(python - exact)
    # a file (RE2's scan) and a live capture of one read (Python's) find the same milestones
    found = [(m.id, m.line, m.text, m.values) for m in analyze(data, PROFILES[0]).milestones]
    assert found == _live(data)


def _live(data: bytes) -> list[tuple[str, int, str, dict]]:
    capture = Capture(PROFILES[0])
    capture.feed(data, None)
    capture.finish()
    return [(m.id, m.line, m.text, m.values) for boot in capture.boots for m in boot.milestones]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")
                                           .replace(b"\r", b"").replace(b"\b", b"")),
                min_size=1, max_size=8))
def test_lines_cleaned_together_equal_each_cleaned_alone(lines: list[bytes]) -> None:
    assert clean_lines(b"\n".join(lines)).split("\n") == [clean(line) for line in lines]


def test_a_string_sequence_cut_off_at_its_line_end_leaves_the_next_line_alone() -> None:
    lines = [b"\x1b]0;a title never ended", b"board login: ", b"\x1bP dcs cut"]
    assert clean_lines(b"\n".join(lines)).split("\n") == [clean(line) for line in lines] \
        == ["", "board login: ", ""]


def test_scans_agree_on_a_coloured_line_that_matches_only_once_cleaned() -> None:
    prefilter = Prefilter([r"^Welcome to [^!]{1,40}!$", r"^Reached target Network\b"])
    text = "noise\n\x1b[1mWelcome to \x1b[0mDebian!\n[  OK  ] Reached \x1b[1mtarget\x1b[0m Time\n"
    for bulk in (False, True):
        assert prefilter.candidate_starts(text, bulk=bulk) == [6]


def test_a_big_text_scanned_by_re2_gives_what_small_pieces_scanned_by_python_give() -> None:
    # the corpus's real boots back to back, past BULK_BYTES: one piece (RE2) against blocks
    # of 64 KiB (Python's scan), same milestones on the same lines
    logs = [path.read_bytes() for path in sorted(CORPUS.glob("*.log"))]
    data = b"\n".join(logs)
    data = data * (BULK_BYTES // len(data) + 1)
    assert len(data) >= BULK_BYTES
    whole = analyze(data, PROFILES[0])
    pieces = analyze_blocks((data[i:i + 65536] for i in range(0, len(data), 65536)),
                            PROFILES[0])
    assert [(m.id, m.line, m.values) for m in whole.milestones] == \
        [(m.id, m.line, m.values) for m in pieces.milestones]
    assert len(whole.boots) == len(pieces.boots) > len(logs)


def test_re2_is_loaded_only_for_big_texts(tmp_path: Path) -> None:
    """`record` and small analyses (the app's per-boot evidence) never load RE2 (~8 MB)."""
    small, big = tmp_path / "small.log", tmp_path / "big.log"
    small.write_bytes(b"U-Boot 2024.01\nStarting kernel ...\n")
    big.write_bytes(b"U-Boot 2024.01\n" + b"[    1.000000] debug line\n" * (BULK_BYTES // 20))
    code = ("import sys, bootlab.commands.record\n"
            "from bootlab.core.analysis.pipeline import Capture\n"
            "from bootlab.core.analysis.profiles import load_profile\n"
            "from bootlab.cli import main\n"
            "c = Capture(load_profile('linux')); c.feed(b'U-Boot 2024.01\\n' * 30000, 0)\n"
            "main(['analyze', sys.argv[1], '--json'])\n"
            "print('RE2', 're2' in sys.modules)\n"
            "main(['analyze', sys.argv[2], '--json'])\n"
            "print('RE2', 're2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(small), str(big)],
                         capture_output=True, text=True, check=True)
    loaded = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("RE2 ")]
    assert loaded == ["False", "True"]
