"""Device bytes shown to a person can never drive the host terminal."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bootlab.core.capture.text import clean

# Anything a terminal acts on: C0 controls but tab, DEL, C1 controls (U+0080-U+009F).
DANGEROUS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
SGR = re.compile(r"\x1b\[[0-9;:]*m")


@given(st.binary(max_size=300))
def test_no_control_character_survives(raw: bytes) -> None:
    assert DANGEROUS.search(clean(raw)) is None


@given(st.binary(max_size=300))
def test_only_sgr_survives_when_colours_are_kept(raw: bytes) -> None:
    shown = SGR.sub("", clean(raw, keep_sgr=True))
    assert DANGEROUS.search(shown) is None


@pytest.mark.parametrize("attack", [
    b"\x1b]52;c;ZWNobyBwd25lZA==\x07",          # OSC 52 clipboard write (BEL)
    b"\x1b]52;c;ZWNobyBwd25lZA==\x1b\\",        # ... terminated by ST
    b"\x1b]0;owned\x07",                        # window title
    b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",  # hyperlink
    b"\x1bP+q544e\x1b\\",                       # DCS (termcap query)
    b"\x1b_Gpayload\x1b\\",                     # APC (kitty graphics)
    b"\x1b^privacy\x1b\\",                      # PM
    b"\x1b[2J\x1b[H",                           # clear screen, home
    b"\x1b[?1049h\x1b[?25l",                    # DEC private modes: alt screen, hide cursor
    b"\x1b[6n",                                 # cursor position request (busybox shell)
    b"\x1bc",                                   # RIS full reset
    "\u009b2J\u009d0;t\u009c".encode(),         # 8-bit CSI and OSC
    b"\x1b[31",                                 # sequence cut off at end of line
    b"\x1b]52;c;AAAA",                          # unterminated OSC
])
def test_terminal_attacks_are_removed(attack: bytes) -> None:
    shown = clean(b"before " + attack + b" after")
    assert "\x1b" not in shown and DANGEROUS.search(shown) is None
    assert shown.startswith("before ")


def test_countdown_redrawn_with_backspaces_shows_its_last_state() -> None:
    raw = b"Hit any key to stop autoboot:  2 \x08\x08\x08 1 \x08\x08\x08 0 "
    assert clean(raw) == "Hit any key to stop autoboot:  0 "


def test_carriage_return_progress_shows_the_last_overwrite() -> None:
    assert clean(b"Loading: 10%\rLoading: 100%\r") == "Loading: 100%"
    assert clean(b"abcdef\rXY") == "XYcdef"


def test_crlf_line_ending_is_not_shown() -> None:
    assert clean(b"Starting kernel ...\r") == "Starting kernel ..."


def test_invalid_utf8_and_nul_are_shown_not_dropped() -> None:
    assert clean(b"a\xffb\x00c") == "a\ufffdb\u2400c"
    assert clean("µs ✓".encode()) == "µs ✓"


def test_sgr_colours_kept_only_on_request() -> None:
    raw = b"\x1b[32m[  OK  ]\x1b[0m Started \x1b]0;x\x07unit"
    assert clean(raw) == "[  OK  ] Started unit"
    assert clean(raw, keep_sgr=True) == "\x1b[32m[  OK  ]\x1b[0m Started unit"


def test_coloured_progress_line_shows_its_last_state() -> None:
    raw = b"\x1b[32m 10%\x1b[0m\r\x1b[32m 20%\x1b[0m"
    assert clean(raw, keep_sgr=True) == clean(raw) == " 20%"
