"""Live capture and file analysis agree, whatever the chunking; boots split into files."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.paths import example_sessions

from bootlab.core.analysis.pipeline import MATCH_LIMIT, Capture, analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.lines import LineFramer
from bootlab.core.capture.linetime import chunk_line_time
from bootlab.core.capture.session import load_session
from bootlab.core.recording.recorder import Recorder, StopRule

PROFILE = load_profile("linux")
EXAMPLE = load_session(example_sessions("default")[0]).data


def live(data: bytes, cuts: list[int]) -> list[tuple[str, int, float | None]]:
    capture = Capture(PROFILE)
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    for a, b in pairwise(bounds):
        capture.feed(data[a:b], a * 1000)
    capture.finish()
    return [(m.id, m.line, m.host_s) for b in capture.boots for m in b.milestones]


def batch(data: bytes, cuts: list[int]) -> list[tuple[str, int, float | None]]:
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    line_time = chunk_line_time(bounds[:-1], [a * 1000 for a in bounds[:-1]])
    result = analyze(data, PROFILE, line_time)
    return [(m.id, m.line, m.host_s) for m in result.milestones]


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=25, deadline=None)
@given(st.lists(st.integers(0, len(EXAMPLE)), max_size=60))
def test_live_and_file_analysis_agree_on_a_real_boot(cuts: list[int]) -> None:
    assert live(EXAMPLE, cuts) == batch(EXAMPLE, cuts)


def test_milestones_of_the_real_boot() -> None:
    ids = [m[0] for m in batch(EXAMPLE, [])]
    assert ids == ["bootloader", "env_loaded", "autoboot", "kernel_loaded", "image_info",
                   "kernel_verified", "kernel_uncompressed",
                   "starting_kernel", "linux", "calibrate", "kernel_done", "init",
                   "root_mounted", "login"]


def test_prompt_is_found_while_it_arrives_without_newline() -> None:
    capture = Capture(PROFILE)
    capture.feed(b"U-Boot 2023.01\r\n", 0)
    update = capture.feed(b"board login: ", 5_000_000)
    assert [m.id for m in update.milestones] == ["login"]
    assert update.milestones[0].host_s == 0.005


def test_second_banner_starts_a_second_boot() -> None:
    data = EXAMPLE + b"\r\nreboot: Restarting system\r\n" + EXAMPLE
    boots = analyze(data, PROFILE).boots
    assert len(boots) == 2
    assert boots[1].milestones[0].id == "bootloader"
    # the first boot ends with the restart; the second starts at the first line after it
    assert [m.id for m in boots[0].milestones] == [m.id for m in boots[1].milestones] + [
        "restart"]
    assert boots[1].first_line == boots[0].milestones[-1].line + 3   # after two blank lines


@pytest.mark.parametrize("cut", [1, 7, 4096])
def test_recorder_writes_one_file_per_boot(tmp_path: Path, cut: int) -> None:
    stream = EXAMPLE + b"\r\nreboot: Restarting system\r\n" + EXAMPLE + EXAMPLE
    recorder = Recorder(PROFILE, tmp_path, {"label": "ab"}, StopRule(boots=2), start_ns=0)
    for i in range(0, len(stream), cut):
        recorder.feed(stream[i:i + cut], 1_000_000 + i * 100)
    recorder.finish()
    paths = sorted(tmp_path.glob("*.jsonl"))
    assert len(paths) == 2
    first, second = (load_session(p) for p in paths)
    third_banner = stream.rindex(b"\nU-Boot 20") + 1
    assert first.data + second.data == stream[:third_banner]
    assert second.data.startswith(b"U-Boot 20")
    assert second.meta["continues"] == paths[0].name and second.meta["boot_index"] == 2
    for session in (first, second):
        boots = analyze(session.data, PROFILE, chunk_line_time(*session.chunk_offsets())).boots
        last = "restart" if session is first else "login"
        assert len(boots) == 1 and boots[0].milestones[-1].id == last
        assert session.chunks[0][0] == 0 or session is first


def test_recorder_stops_at_the_goal_and_at_timeout(tmp_path: Path) -> None:
    recorder = Recorder(PROFILE, tmp_path / "a", {}, StopRule(until=("starting_kernel",)),
                        start_ns=0)
    recorder.feed(EXAMPLE, 10)
    assert recorder.finished and recorder.succeeded
    slow = Recorder(PROFILE, tmp_path / "b", {}, StopRule(until=("login",), timeout_s=1.0),
                    start_ns=0)
    slow.feed(b"U-Boot 2023.01\r\n", 10)
    slow.feed(b"", 2 * 10**9)
    assert slow.finished and slow.timed_out and not slow.succeeded
    assert load_session(next((tmp_path / "b").glob("*.jsonl"))).data == b"U-Boot 2023.01\r\n"


def test_prefilter_is_a_superset_for_odd_patterns() -> None:
    from bootlab.core.analysis.prefilter import Prefilter

    prefilter = Prefilter([r"^foo|bar", r"(?i)Kernel Ready", r"^login: ?$"])
    text = "hello bar\nnothing\r\nKERNEL READY now\nlogin: \r\n"
    assert prefilter.candidate_starts(text) == [0, 19, 36]
    assert prefilter.candidate("hello bar") and not prefilter.candidate("DRAM:  1 GiB\r")


def test_quiet_boot_places_init_even_when_userspace_starts_with_a_prompt() -> None:
    log = (b"U-Boot 2023.01\r\nStarting kernel ...\r\n\r\n"
           b"Please press Enter to activate this console.\r\n")
    ids = [(m.id, m.fallback) for m in analyze(log, PROFILE).milestones]
    assert ("init", True) in ids and ("kernel_done", True) in ids and ("console", False) in ids


def test_recorder_reports_the_unterminated_last_line(tmp_path: Path) -> None:
    seen: list[bytes] = []
    recorder = Recorder(PROFILE, tmp_path, {}, StopRule(), start_ns=0,
                        on_line=lambda line: seen.append(line.raw))
    recorder.feed(b"U-Boot 2023.01\r\nboard login: ", 10)
    recorder.finish()
    assert seen == [b"U-Boot 2023.01\r", b"board login: "]


def test_prefilter_routes_loose_anchored_patterns_to_needles() -> None:
    from bootlab.core.analysis.prefilter import Prefilter

    # "\S{1,64} login:" would run at every message start; its needle finds it instead.
    prefilter = Prefilter([r"^(?!Last )\S{1,64} login: ?", r"^Starting kernel\b",
                           r"^\s*(?P<n>\d+) bytes read in (?P<ms>\d+) ms", r"1 bytes read in X"])
    assert " login:" in prefilter.needles and " bytes read in " in prefilter.needles
    assert "1 bytes read in X" not in prefilter.needles  # holds a shorter needle
    text = "qemu login: \nnoise\n  1234 bytes read in 5 ms\n[ 1.0] Starting kernel ...\n"
    assert prefilter.candidate_starts(text) == [0, 19, 45]


@given(st.lists(st.sampled_from(["Starting kernel ...", "qemu login: ", "\x1b[1mWelcome to ",
                                 "Debian!", "Run /sbin/init as init process", "[    1.000000] ",
                                 "\x1b[0m", "é", "x", " ", "U-Boot 2024.01", "\x07"]),
                max_size=8))
@settings(deadline=None)   # correctness, not speed: a loaded machine must not fail it
def test_matchable_never_hides_a_marker_match(pieces: list[str]) -> None:
    from bootlab.core.analysis.pipeline import MarkerSet, parse_line

    markers = MarkerSet(PROFILE)
    parsed = parse_line(1, "".join(pieces).encode(), None)
    exact = [m for m in PROFILE.markers if m.match(parsed.message) is not None]
    assert not exact or markers.prefilter.matchable(parsed.message)


@pytest.mark.parametrize("path", example_sessions(), ids=lambda p: p.name)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(0, 1 << 16), max_size=6))
def test_big_reads_scanned_together_find_what_line_by_line_finds(path: Path,
                                                                cuts: list[int]) -> None:
    # Few cuts: most reads hold many lines, so Capture scans them in one prefilter pass.
    data = load_session(path).data
    assert live(data, cuts) == batch(data, cuts)


def test_lines_found_only_for_their_odd_bytes_are_matched_whole() -> None:
    # a coloured milestone line and one after power-on garbage: the prefilter finds them by
    # their escape or 0xff byte alone, and the markers then read the whole line
    data = (b"plain\r\n\x1b[1mU-Boot 2023.01 (Jun 22 2026 - 08:38:07 +0000)\x1b[0m\r\nplain\r\n"
            b"\xff\xffStarting kernel ...\r\n") * 2
    boots = analyze(data, PROFILE).boots
    assert [[(m.id, m.line) for m in b.milestones if not m.fallback] for b in boots] == [
        [("bootloader", 2), ("starting_kernel", 4)], [("bootloader", 6), ("starting_kernel", 8)]]


@pytest.mark.parametrize("plain_lines", [0, 30])  # checked line by line, or in one scan
def test_a_read_holding_a_line_longer_than_markers_read_finds_the_lines_around_it(
        plain_lines: int) -> None:
    data = (b"U-Boot 2023.01\r\n" + b"DRAM:  512 MiB\r\n" * plain_lines + b"x" *
            (3 * MATCH_LIMIT) + b" Starting kernel ...\r\nStarting kernel ...\r\n")
    assert live(data, []) == batch(data, []) == [
        ("bootloader", 1, 0.0), ("starting_kernel", plain_lines + 3, 0.0)]


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          max_examples=20, deadline=None)
@given(cuts=st.lists(st.integers(0, len(EXAMPLE)), max_size=40))
def test_recorder_keeps_every_byte_and_each_line_the_time_of_its_first_byte(
        tmp_path_factory: pytest.TempPathFactory, cuts: list[int]) -> None:
    folder = tmp_path_factory.mktemp("rec")
    bounds = sorted({c % (len(EXAMPLE) + 1) for c in cuts} | {0, len(EXAMPLE)})
    seen = []
    shown = Recorder(PROFILE, folder / "lines", {}, StopRule(), start_ns=0, on_line=seen.append)
    quiet = Recorder(PROFILE, folder / "quiet", {}, StopRule(), start_ns=0, auto_split=False)
    reads = [(EXAMPLE[a:b], 1_000 + a) for a, b in pairwise(bounds)]
    for recorder in (shown, quiet):
        for data, t_ns in reads:
            recorder.feed(data, t_ns)
        recorder.finish()
    framer = LineFramer()
    expected = [line for data, t_ns in reads for line in framer.feed(data, t_ns)]
    expected += [last] if (last := framer.flush()) else []
    assert seen == expected
    for line in seen:  # the read that brought its first byte
        assert line.t_ns == 1_000 + max(a for a in bounds if a <= line.offset)
    for recorder in (shown, quiet):
        assert b"".join(load_session(r.path).data for r in recorder.records) == EXAMPLE
    assert [m.id for m in quiet.milestones(quiet.current)] == \
        [m[0] for m in batch(EXAMPLE, cuts)]


def test_a_live_prompt_is_reached_at_its_colon_not_at_login() -> None:
    capture = Capture(PROFILE)
    capture.feed(b"U-Boot 2023.01\r\nStarting kernel ...\r\nboard login", 10)
    assert "login" not in {m.id for b in capture.boots for m in b.milestones}
    update = capture.feed(b": ", 20)
    assert [m.id for m in update.milestones] == ["login"]
