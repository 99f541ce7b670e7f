"""User milestones: a marked console line becomes a milestone of the user's profile file."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
from support.paths import example_sessions

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import ProfileError, load_profile
from bootlab.core.analysis.usermarks import (
    UserMarkError,
    add_user_milestone,
    message_of,
    milestone_id,
    pattern_for,
)
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source
from bootlab.core.files.config import config_dir, profile_dirs

DEFAULT_A, DEFAULT_B = example_sessions("default")[:2]


@pytest.mark.parametrize(("message", "same_line_later", "other_line"), [
    ("Run /sbin/init as init process", "Run /sbin/init as init process",
     "Run /init as init process"),
    ("eth0: Link is Up - 1Gbps/Full - flow control rx/tx",
     "eth1: Link is Up - 10Gbps/Full - flow control rx/tx", "eth0: Link is Down"),
    ("Kernel image @ 0x40200000 [ 0x000000 - 0x5a3e10 ]",
     "Kernel image @ 0x48000000 [ 0x000000 - 0x61aa00 ]", "Kernel image verified"),
    ("app: ready after 1234 ms at 12:34:56", "app: ready after 98 ms at 01:02:03",
     "app: ready? after 98 ms"),
    ("build a930779e06 (v2.1)", "build 0badcafe12 (v3.10)", "build (v2.1)"),
    ("  indented (a+b)*[c]$ text", "  indented (a+b)*[c]$ text", "indented (a+b)*[c]$ text"),
])
def test_pattern_matches_the_same_line_with_other_numbers_only(
        message: str, same_line_later: str, other_line: str) -> None:
    pattern = pattern_for(message)
    assert pattern.startswith("^")
    assert re.search(pattern, message) and re.search(pattern, same_line_later)
    assert not re.search(pattern, other_line)


def test_pattern_covers_a_bounded_prefix_of_a_long_line() -> None:
    long = "x" * 50 + " tail " + "y" * 5000
    pattern = pattern_for(long)
    assert len(pattern) < 100 and re.search(pattern, long[:64] + "different rest")


@pytest.mark.parametrize("message", ["", "   ", "12 34 56", "0x1f 7", "ok 1"])
def test_lines_with_too_little_fixed_text_are_refused(message: str) -> None:
    with pytest.raises(UserMarkError, match="choose another line"):
        pattern_for(message)


@pytest.mark.parametrize(("message", "taken", "expected"), [
    ("Run /sbin/init as init process", set(), "run_sbin_init"),
    ("Run /sbin/init as init process", {"run_sbin_init"}, "run_sbin_init_2"),
    ("Run /sbin/init", {"run_sbin_init", "run_sbin_init_2"}, "run_sbin_init_3"),
    ("Kernel image @ 0x40200000 [ 0x0 - 0x5a3e10 ]", set(), "kernel_image"),
    ("eth0: up", set(), "eth_up"),
    ("12345 ---", set(), "mark"),
])
def test_milestone_ids_are_snake_case_words_of_the_message(
        message: str, taken: set[str], expected: str) -> None:
    assert milestone_id(message, taken) == expected


def line_of(path: Path, needle: bytes) -> tuple[int, bytes]:
    lines = load_session(path).data.split(b"\n")
    index = next(i for i, line in enumerate(lines) if needle in line)
    return index + 1, lines[index]


def test_marking_a_line_of_a_built_in_profile_creates_a_user_profile_extending_it() -> None:
    # GIVEN the built-in profile, and a line of one boot that is no milestone
    dirs = profile_dirs(Path("sessions"))
    linux = load_profile("linux", dirs)
    number_a, line_a = line_of(DEFAULT_A, b"random: crng init done")
    # WHEN it is marked
    mark = add_user_milestone(linux, line_a, "kernel", config_dir() / "profiles", dirs)
    # THEN the user's linux.toml extends the built-in with it, for the CLI too
    assert mark.created and mark.path == config_dir() / "profiles" / "linux.toml"
    assert mark.marker.id == "random_crng_init" and mark.marker.stage == "kernel"
    reloaded = load_profile("linux", dirs)
    assert [m.id for m in reloaded.markers] == [m.id for m in linux.markers] + ["random_crng_init"]
    assert reloaded.source == str(mark.path)
    # AND the same line of another boot is found as the milestone
    number_b, _ = line_of(DEFAULT_B, b"random: crng init done")
    for path, number in ((DEFAULT_A, number_a), (DEFAULT_B, number_b)):
        source = open_source(path)
        found = analyze(source.data, reloaded, source.line_time).boots[0].reached(
            "random_crng_init")
        assert found is not None and found.line == number


def test_a_second_mark_is_appended_to_the_user_file_keeping_it_and_its_mode(
        tmp_path: Path) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    own = folder / "bench.toml"
    own.write_text('# my board\n[profile]\nname = "bench"\nextends = "linux"\n\n'
                   '[[milestone]]\nid = "app_ready"\nstage = "userspace"\n'
                   "match = ['^app ready']\n", encoding="utf-8")
    own.chmod(0o600)
    profile = load_profile("bench", [folder])
    mark = add_user_milestone(profile, b"[    1.500000] my driver: probe done in 12 ms\r",
                              "kernel", tmp_path / "elsewhere", [folder])
    assert not mark.created and mark.path == own
    text = own.read_text(encoding="utf-8")
    assert text.startswith("# my board\n") and text.count("[[milestone]]") == 2
    assert stat.S_IMODE(own.stat().st_mode) == 0o600
    assert mark.marker.match(message_of(b"[    2.000000] my driver: probe done in 7 ms")) \
        is not None
    again = add_user_milestone(mark.profile, b"second: thing", "userspace", tmp_path, [folder])
    assert [m.id for m in again.profile.markers][-3:] == ["app_ready", "my_driver_probe",
                                                          "second_thing"]


def test_quotes_and_backslashes_survive_the_toml_file(tmp_path: Path) -> None:
    line = b"mount: can't find '/dev/mmc\\blk0' in \"fstab\""
    mark = add_user_milestone(load_profile("linux"), line, "userspace", tmp_path)
    assert mark.marker.match(message_of(line)) is not None


def test_a_line_that_is_already_a_milestone_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserMarkError, match="already milestone 'init'"):
        add_user_milestone(load_profile("linux"), b"Run /sbin/init as init process", "kernel",
                           tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_mark_that_would_not_load_back_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    own = tmp_path / "bench.toml"
    own.write_text('[profile]\nname = "bench"\nextends = "linux"\n', encoding="utf-8")
    profile = load_profile(str(own))
    broken = '[profile]\nname = "bench"\nextends = "no-such-profile"\n'
    own.write_text(broken, encoding="utf-8")  # edited on disk since it was loaded
    with pytest.raises(ProfileError, match="no such profile"):
        add_user_milestone(profile, b"my app: started", "userspace", tmp_path)
    assert own.read_text(encoding="utf-8") == broken
    assert [p.name for p in tmp_path.iterdir()] == ["bench.toml"]


def test_an_unknown_stage_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserMarkError, match="stage 'late'"):
        add_user_milestone(load_profile("linux"), b"my app: started", "late", tmp_path)
