"""initcall_debug parsing, top N and totals, diffs between boots and groups, bootgraph charts."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.core.analysis import initcalls
from bootlab.core.analysis.initcalls import (
    Change,
    Initcall,
    diff,
    diff_groups,
    parse,
    top,
    total_us,
)
from bootlab.core.render import bootgraph
from bootlab.core.render.svg import MIN_TEXT_WIDTH

QEMU_LOG = Path(__file__).parent / "data" / "initcall-qemu.log"
SVG = "{http://www.w3.org/2000/svg}"

BOOT_A = b"""\
[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]
[    0.101234] calling  pci_subsys_init+0x0/0x8c @ 1
[    0.109876] initcall pci_subsys_init+0x0/0x8c returned 0 after 8642 usecs
[    0.120000] calling  inet_init+0x0/0x2a4 @ 1
[    0.120500] NET: Registered PF_INET protocol family
[    0.163800] initcall inet_init+0x0/0x2a4 returned 0 after 43800 usecs
[    0.200000] calling  ehci_hcd_init+0x0/0x100 @ 1
[    0.200100] ehci_hcd: USB 2.0 'Enhanced' Host Controller (EHCI) Driver
[    0.201000] initcall ehci_hcd_init+0x0/0x100 returned 0 after 1000 usecs
[    0.300000] calling  mmc_blk_init+0x0/0xc8 @ 1
[    0.412000] probe of mmc0:0001 returned 0 after 110000 usecs
[    0.412345] initcall mmc_blk_init+0x0/0xc8 returned 0 after 112345 usecs
[    0.500000] calling  deferred_probe_initcall+0x0/0xb8 @ 1
[    0.742000] initcall deferred_probe_initcall+0x0/0xb8 returned 0 after 242000 usecs
"""


def test_parses_calling_and_returned_pairs_with_printk_times() -> None:
    calls = parse(BOOT_A)
    assert [c.label for c in calls] == [
        "pci_subsys_init", "inet_init", "ehci_hcd_init", "probe of mmc0:0001", "mmc_blk_init",
        "deferred_probe_initcall"]
    inet = calls[1]
    assert inet == Initcall("inet_init", None, 0.12, 43800, 0, 6, "initcall")
    probe = calls[3]
    assert probe.kind == "probe" and probe.duration_us == 110000
    assert probe.start_s == pytest.approx(0.412 - 0.11)
    assert inet.to_json() == {"kind": "initcall", "name": "inet_init", "module": None,
                              "start_s": 0.12, "duration_us": 43800, "ret": 0, "line": 6}


@pytest.mark.parametrize("calling, returned, expected", [
    # no printk stamps at all (console without printk.time)
    ("calling  inet_init+0x0/0x2a4 @ 1",
     "initcall inet_init+0x0/0x2a4 returned 0 after 43800 usecs",
     ("inet_init", None, None, 43800, 0)),
    # CONFIG_PRINTK_CALLER: a task id after the time
    ("[    0.120000][    T1] calling  inet_init+0x0/0x2a4 @ 1",
     "[    0.163800][    T1] initcall inet_init+0x0/0x2a4 returned 0 after 43800 usecs",
     ("inet_init", None, 0.12, 43800, 0)),
    # dmesg -r: syslog level first
    ("<7>[    0.120000] calling  inet_init+0x0/0x2a4 @ 1",
     "<7>[    0.163800] initcall inet_init+0x0/0x2a4 returned 0 after 43800 usecs",
     ("inet_init", None, 0.12, 43800, 0)),
    # newer kernels: no +offset/size
    ("[    0.120000] calling  inet_init @ 1",
     "[    0.163800] initcall inet_init returned 0 after 43800 usecs",
     ("inet_init", None, 0.12, 43800, 0)),
    # a module's init function, a negative return
    ("[    5.144848] calling  virtio_blk_init+0x0/0x1000 [virtio_blk] @ 89",
     "[    5.206252] initcall virtio_blk_init+0x0/0x1000 [virtio_blk] returned -19 after "
     "60773 usecs",
     ("virtio_blk_init", "virtio_blk", 5.144848, 60773, -19)),
    # very old kernels counted milliseconds
    ("calling  inet_init+0x0/0x2a4 @ 1", "initcall inet_init+0x0/0x2a4 returned 0 after 44 msecs",
     ("inet_init", None, None, 44000, 0)),
])
def test_parse_variants(calling: str, returned: str,
                        expected: tuple[str, str | None, float | None, int, int]) -> None:
    calls = parse(f"{calling}\nsome other line\n{returned}\n".encode())
    assert len(calls) == 1
    call = calls[0]
    assert (call.name, call.module, call.start_s, call.duration_us, call.ret) == expected
    assert call.line == 3 and call.kind == "initcall"


@pytest.mark.parametrize("line, name", [
    ("[    0.561086] probe of 9000000.pl011 returned 0 after 208000 usecs", "9000000.pl011"),
    ("[    0.561086] serial 9000000.pl011: probe with driver uart-pl011 returned 0 after "
     "208000 usecs", "uart-pl011"),
])
def test_probe_lines(line: str, name: str) -> None:
    (call,) = parse(line.encode())
    assert call.kind == "probe" and call.name == name and call.module is None
    assert call.start_s == pytest.approx(0.353086) and call.duration_us == 208000


def test_returned_without_calling_starts_at_its_stamp_minus_duration() -> None:
    (call,) = parse(b"[    1.000000] initcall foo_init+0x0/0x10 returned 0 after 250000 usecs")
    assert call.start_s == pytest.approx(0.75)


def test_other_lines_are_ignored() -> None:
    log = (
        b"[    2.501803] pci 0000:00:00.0: calling  quirk_mmio_always_on+0x0/0x20 @ 1\n"
        b"[    2.502824] pci 0000:00:00.0: quirk_mmio_always_on+0x0/0x20 took 30 usecs\n"
        b"[    3.000000] calling  never_returns+0x0/0x10 @ 1\n"
        b"[    3.100000] initcall bad_init blacklisted\n"
        b"returned 0 after 5 usecs\n"
        b"Kernel command line: initcall_debug\n")
    assert parse(log) == []


def test_device_text_in_names_is_cleaned() -> None:
    (call,) = parse(b"calling  evil\x1b]0;t\x07_init @ 1\n"
                    b"initcall evil\x1b]0;t\x07_init returned 0 after 5 usecs\n")
    assert call.name == "evil_init" and call.start_s is None


def test_real_qemu_log() -> None:
    calls = parse(QEMU_LOG.read_bytes())
    assert len(calls) == 103
    by_label = {c.label: c for c in calls}
    blk = by_label["virtio_blk_init [virtio_blk]"]
    assert (blk.start_s, blk.duration_us, blk.ret) == (5.144848, 60773, 0)
    assert by_label["cci_init"].ret == -19
    assert [c.label for c in top(calls, 2)] == ["of_platform_default_populate_init",
                                                "probe of 9000000.pl011"]
    assert "quirk_mmio_always_on" not in by_label
    assert total_us(calls) == sum(c.duration_us for c in calls if c.kind == "initcall")


def test_top_and_total() -> None:
    calls = parse(BOOT_A)
    assert [c.name for c in top(calls, 3)] == ["deferred_probe_initcall", "mmc_blk_init",
                                                "mmc0:0001"]
    assert top(calls, 0) == []
    # probes run inside initcalls: only initcalls add up
    assert total_us(calls) == 8642 + 43800 + 1000 + 112345 + 242000


def boot_b() -> bytes:
    text = BOOT_A.decode().replace("after 43800 usecs", "after 23800 usecs")
    text = text.replace("[    0.200000] calling  ehci_hcd_init+0x0/0x100 @ 1\n", "")
    text = text.replace("initcall ehci_hcd_init+0x0/0x100 returned 0 after 1000 usecs",
                        "initcall ohci_hcd_mod_init+0x0/0x80 returned 0 after 5000 usecs")
    return text.encode()


def test_diff_of_two_boots() -> None:
    changes = diff([parse(BOOT_A)], [parse(boot_b())])
    assert [c.label for c in changes[:3]] == ["inet_init", "ohci_hcd_mod_init", "ehci_hcd_init"]
    inet, ohci, ehci = changes[:3]
    assert (inet.a_us, inet.b_us, inet.delta_us, inet.status) == (43800, 23800, -20000, "both")
    assert (ohci.status, ohci.delta_us, ohci.n_a, ohci.n_b) == ("new", 5000, 0, 1)
    assert (ehci.status, ehci.delta_us) == ("gone", -1000)
    assert all(c.delta_us == 0 for c in changes[3:])
    assert initcalls.describe_change(inet) == "-20.0 ms inet_init (43.8 ms -> 23.8 ms)"
    assert initcalls.describe_change(ohci) == "+5.0 ms ohci_hcd_mod_init (new) (- -> 5.0 ms)"


def test_diff_of_groups_takes_medians_per_side() -> None:
    def boot(us: int) -> list[Initcall]:
        return [Initcall("inet_init", None, 0.1, us, 0, 1)]

    (change,) = diff([boot(100), boot(300), boot(200)], [boot(1000), boot(2000)])
    assert (change.a_us, change.b_us, change.n_a, change.n_b) == (200, 1500, 3, 2)
    # an initcall run twice in one boot counts once, with both durations
    (twice,) = diff([boot(100) + boot(50)], [boot(100)])
    assert twice.a_us == 150


def test_diff_groups_follow_labels() -> None:
    a, b = parse(BOOT_A), parse(boot_b())
    groups = diff_groups([("1.jsonl", "base", a), ("2.jsonl", "base", a),
                          ("3.jsonl", "", []), ("4.jsonl", "nousb", b), ("5.jsonl", "nousb", b)])
    assert [(x, y) for x, y, _ in groups] == [("base", "nousb")]
    change = groups[0][2][0]
    assert isinstance(change, Change) and (change.n_a, change.n_b) == (2, 2)
    single = diff_groups([("1.jsonl", "x", a), ("2.jsonl", "y", b)])
    assert [(x, y) for x, y, _ in single] == [("1.jsonl", "2.jsonl")]
    assert diff_groups([("1.jsonl", "", a)]) == []


def test_text_chart_rows_on_the_printk_axis() -> None:
    chart = bootgraph.chart_text(parse(BOOT_A), width=80, limit=3).splitlines()
    assert len(chart) == 3 + 2
    rows = chart[:3]
    # the three longest, in start order (the probe runs inside mmc_blk_init), later further right
    assert [r.split()[0] for r in rows] == ["mmc_blk_init", "probe", "deferred_probe_initcall"]
    bars = [r.index("█") if "█" in r else r.index("▏") for r in rows[1:]]
    assert bars[0] < bars[1]
    assert rows[2].endswith("242.0 ms")
    assert "┬" in chart[-2] and chart[-1].split()[:2] == ["s", "0.0"]


@settings(max_examples=60, deadline=None)
@given(width=st.integers(MIN_TEXT_WIDTH, 240), limit=st.integers(1, 40),
       durations=st.lists(st.integers(0, 5_000_000), min_size=1, max_size=40),
       name=st.text(min_size=1, max_size=80))
def test_text_chart_never_exceeds_its_width(width: int, limit: int, durations: list[int],
                                            name: str) -> None:
    calls = []
    t = 0.0
    for i, us in enumerate(durations):
        calls.append(Initcall(f"{name}_{i}", None, t, us, 0, i + 1))
        t += us / 1e6 * 0.7
    chart = bootgraph.chart_text(calls, width=width, limit=limit)
    out = chart.rstrip("\n").split("\n")
    assert len(out) == min(limit, len(calls)) + 2
    assert all(len(line) <= width for line in out)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", chart.replace("\n", ""))


def test_text_chart_too_narrow() -> None:
    with pytest.raises(ValueError, match="at least"):
        bootgraph.chart_text(parse(BOOT_A), width=MIN_TEXT_WIDTH - 1)


def test_without_printk_times_calls_are_laid_end_to_end() -> None:
    log = "\n".join(line.split("] ", 1)[1] for line in BOOT_A.decode().splitlines())
    calls = parse(log.encode())
    assert all(c.start_s is None for c in calls)
    rows = bootgraph.chart_text(calls, width=60, limit=10).splitlines()[:-2]
    starts = [min(r.find(ch) for ch in "█▏▎▍▌▋▊▉" if ch in r) for r in rows]
    assert starts == sorted(starts)


def test_svg_chart_has_one_rect_per_call_shown_and_escapes_names() -> None:
    log = BOOT_A + (b"[    0.800000] calling  <script>alert(1)</script>+0x0/0x8 @ 1\n"
                    b"[    0.900000] initcall <script>alert(1)</script>+0x0/0x8 returned 0 "
                    b"after 100000 usecs\n")
    calls = parse(log)
    svg = bootgraph.chart_svg(calls, limit=4, title='boot "A" <1>')
    assert "<script" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    rects = root.findall(f"{SVG}rect")
    assert len(rects) == 4
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "<script>alert(1)</script>" in texts and 'boot "A" <1>' in texts
    widths = [float(r.get("width", "0")) for r in rects]
    assert all(w >= 1 for w in widths)
