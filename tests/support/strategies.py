"""Hypothesis strategies for fuzzing: device bytes rich in the things parsers trip on."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FRAGMENTS = [
    b"\x1b[", b"\x1b]", b"\x1bP", b"\x1b_", b"\x1b^", b"\x1bX", b"\x1b[?1049h", b"\x1b[2J",
    b"\x1b]52;c;aGk=\x07", b"\x1b]0;title\x07", b"\x1b\\", b"\x07", b"\x9b", b"\x9d", b"\x90",
    b"\x9c", b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x90", b"\x1b[31m", b"\x1b[0m", b"\r", b"\n",
    b"\r\n", b"\b", b"\x00", b"\x7f", b"\t", b"\xff", b"\xe2\x80", b"\xf0\x9f\x98\x80",
    b"[    1.234567] ", b"[   5.878] ", b"[0001.261] ", b"<6>", b"[    T1] ",
    b"[0:  swapper/0:    1] ",
    b"[99999999.999999] ", b"U-Boot 2023.01 (Jan 01 2023)", b"U-Boot SPL 2023.01",
    b"Hit any key to stop autoboot:  2 ", b"Starting kernel ...", b"Booting Linux on ",
    b"Calibrating delay loop... 125.00 BogoMIPS (lpj=250000)", b"Run /sbin/init as init process",
    b"Freeing unused kernel memory: 1024K", b"buildroot login: ", b"Password: ", b"=> ",
    b"0123456789", b".", b" ", b":", b";", b"-", b"]", b"[", b"m",
]
"""Pieces of real boots, stamps, and escape sequences: random bytes alone rarely hit them."""

device_bytes = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=12)),
                        max_size=40).map(b"".join)
"""Bytes as a board (or a broken one) might send them."""

_number = st.one_of(
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).map(lambda x: f"{x:.6f}"),
    st.sampled_from(["0.000000", "-1.5", "1e999", "nan", "99999999999.1", ".5", "1.", "00.00"]),
    st.from_regex(r"-?\d{1,12}\.\d{1,10}", fullmatch=True),
)
_clock = st.one_of(st.from_regex(r"\d{1,2}:\d\d:\d\d(\.\d{1,9})?", fullmatch=True),
                   st.just("25:99:99.999"))


@st.composite
def grabserial_line(draw: st.DrawFn) -> bytes:
    """A line as grabserial writes it (-t, -T, both), sometimes malformed."""
    parts = draw(st.lists(st.one_of(_number, _clock), min_size=1, max_size=3))
    text = draw(device_bytes)
    spaces = draw(st.sampled_from([" ", "  ", ""]))
    return f"[{spaces}{' '.join(parts)}] ".encode() + text


@st.composite
def dmesg_line(draw: st.DrawFn) -> bytes:
    """A kernel log line as dmesg, dmesg -r or journalctl -k -o short-monotonic print it."""
    level = draw(st.sampled_from([b"", b"<6>", b"<12>", b"<999>"]))
    stamp = draw(st.one_of(st.from_regex(r"\[ {0,14}\d{1,9}\.\d{6}\]", fullmatch=True),
                           st.just("[ 1.2345678]")))
    host = draw(st.sampled_from([b"", b" host kernel:", b" h kernel:"]))
    return level + stamp.encode() + host + b" " + draw(device_bytes)


log_bytes = st.one_of(
    device_bytes,
    st.lists(grabserial_line(), max_size=12).map(b"\n".join),
    st.lists(dmesg_line(), max_size=12).map(b"\n".join),
    st.lists(st.one_of(grabserial_line(), dmesg_line(), device_bytes), max_size=12)
    .map(b"\n".join),
)
"""Whole log files of every kind `bootlab analyze` reads, and mixtures of them."""

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
              st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6,
)

_FIELDS = ["t", "rx", "tx", "tx_redacted", "event", "meta", "split", "next", "reason",
           "label", "board", "profile", "probes", "settings", "started", "version", "format"]


@st.composite
def session_record(draw: st.DrawFn) -> bytes:
    """One line of a session file: a good record, a mistyped one, or junk."""
    good = st.one_of(
        st.builds(lambda t, d: {"t": t, "rx": d.decode("latin-1")}, st.integers(0, 10**12),
                  device_bytes),
        st.builds(lambda t, d: {"t": t, "tx": d}, st.integers(0, 10**12), st.text(max_size=8)),
        st.builds(lambda t, n: {"t": t, "tx_redacted": n}, st.integers(), st.integers(0, 99)),
        st.builds(lambda t, m: {"t": t, "meta": m}, st.integers(),
                  st.dictionaries(st.sampled_from(_FIELDS), json_values, max_size=4)),
        st.builds(lambda t, r: {"t": t, "event": "end", "reason": r}, st.integers(), json_values),
        st.builds(lambda t, s: {"t": t, "split": s, "next": "x.jsonl"}, st.integers(),
                  st.integers(-5, 10**6)),
    )
    mistyped = st.dictionaries(st.sampled_from(_FIELDS), json_values, max_size=4)
    record = draw(st.one_of(good, mistyped, json_values))
    line = json.dumps(record).encode()
    if draw(st.integers(0, 9)) == 0:
        line = draw(st.binary(max_size=20)) + line[draw(st.integers(0, len(line))):]
    return line


@st.composite
def session_file(draw: st.DrawFn) -> bytes:
    """A session file: a header (maybe of a future version, maybe odd), records, maybe cut."""
    header = {"format": "bootlab-session",
              "version": draw(st.one_of(st.just(1), st.integers(), json_values)),
              **draw(st.dictionaries(st.sampled_from(_FIELDS[8:]), json_values, max_size=5))}
    header["format"] = "bootlab-session"
    lines = [json.dumps(header).encode(), *draw(st.lists(session_record(), max_size=12))]
    data = b"\n".join(lines) + b"\n"
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return data


def fuzz(examples: int) -> settings:
    """Settings for a fuzz property: `examples` inputs, no deadline (CI machines are busy)."""
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
