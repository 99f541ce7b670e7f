"""The profile format's rules, each on a small profile of its own: stage profiles included and
ordered, a user's merge, weak and match lines, context with unless/at_least, recheck,
not_before, restarts, shared lines, late firmware, kernel_lines; and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import Profile, ProfileError, load_profile, parse_profile

HEAD = '[profile]\nname = "t"\n\n'


def _ids(profile: Profile, *lines: str) -> list[list[tuple[str, int]]]:
    data = ("\n".join(lines) + "\n").encode()
    return [[(m.id, m.line) for m in boot.milestones] for boot in analyze(data, profile).boots]


def _profile(body: str) -> Profile:
    return parse_profile(HEAD + body, "t.toml")


# --- include, order, merge ------------------------------------------------------------------

def test_included_stage_profiles_merge_their_lines_into_one_milestone(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[profile]\nkind = "stage"\n[[milestone]]\nid = "boot"\n'
                                     'stage = "bootloader"\nmatch = "^ALPHA"\n')
    (tmp_path / "b.toml").write_text('[profile]\nkind = "stage"\n[[milestone]]\nid = "boot"\n'
                                     'stage = "bootloader"\nmatch = "^BETA"\n[[milestone]]\n'
                                     'id = "early"\nstage = "firmware"\nmatch = "^ROM"\n')
    (tmp_path / "whole.toml").write_text('[profile]\ninclude = ["a", "b"]\n')
    profile = load_profile("whole", [tmp_path])
    assert profile.kind == "boot"
    assert [m.id for m in profile.markers] == ["early", "boot"]     # placed by stage
    assert [p.pattern for p in profile.by_id["boot"].patterns] == ["^ALPHA", "^BETA"]
    assert load_profile("a", [tmp_path]).kind == "stage"


def test_included_profiles_must_agree_on_a_milestones_flags(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[[milestone]]\nid = "boot"\nstage = "bootloader"\n'
                                     'new_boot = true\nmatch = "^A"\n')
    (tmp_path / "b.toml").write_text('[[milestone]]\nid = "boot"\nstage = "bootloader"\n'
                                     'match = "^B"\n')
    (tmp_path / "whole.toml").write_text('[profile]\ninclude = ["a", "b"]\n')
    with pytest.raises(ProfileError, match="new_boot is True here but False in"):
        load_profile("whole", [tmp_path])


def test_order_names_known_milestones() -> None:
    with pytest.raises(ProfileError, match="order names unknown milestone"):
        parse_profile('[profile]\norder = ["nope"]\n[[milestone]]\nid = "a"\nmatch = "^a"\n',
                      "t.toml")


def test_the_built_in_profile_is_its_stage_profiles_in_boot_order() -> None:
    linux = load_profile("linux")
    uboot = load_profile("uboot")
    assert uboot.kind == "stage"
    for marker in uboot.markers:
        for pattern in marker.patterns:
            assert pattern.pattern in {p.pattern for p in linux.by_id[marker.id].patterns}
    ids = [m.id for m in linux.markers]
    assert ids.index("spl") < ids.index("bl31") < ids.index("bootloader") < ids.index("linux")


def test_a_user_merge_adds_a_line_and_keeps_the_built_in_ones(tmp_path: Path) -> None:
    (tmp_path / "linux.toml").write_text(
        '[profile]\nname = "linux"\nextends = "linux"\n\n[[milestone]]\nid = "autoboot"\n'
        "merge = true\nmatch = ['^Press 1 means entering boot mode']\n")
    profile = load_profile("linux", [tmp_path])
    autoboot = profile.by_id["autoboot"]
    assert autoboot.partial and autoboot.stage == "bootloader"     # the built-in's flags
    assert autoboot.match("*** Press 1 means entering boot mode***") is None   # anchored
    assert autoboot.match("Press 1 means entering boot mode***") is not None
    assert autoboot.match("Hit any key to stop autoboot:  2 ") == {"bootdelay": 2}


def test_a_merge_needs_a_milestone_to_merge_into(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('[profile]\nextends = "linux"\n\n[[milestone]]\nid = "nothing_like_it"\n'
                    "merge = true\nmatch = ['^x']\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path))
    assert caught.value.line == 5 and "has no milestone with this id" in caught.value.reason


# --- weak, context, unless, at_least, recheck, not_before -----------------------------------

def test_a_weak_line_holds_the_place_until_a_match_line() -> None:
    profile = _profile('[[milestone]]\nid = "root"\nmatch = "^VFS: Mounted"\n'
                       'weak = "^EXT4 mounted"\n')
    assert _ids(profile, "EXT4 mounted", "VFS: Mounted root") == [[("root", 2)]]
    assert _ids(profile, "VFS: Mounted root", "EXT4 mounted") == [[("root", 1)]]
    assert _ids(profile, "EXT4 mounted", "EXT4 mounted") == [[("root", 1)]]


def test_context_names_the_next_hit_and_unless_refuses_it() -> None:
    profile = _profile('[[milestone]]\nid = "load"\nstage = "bootloader"\n'
                       "match = '^(?P<bytes>\\d+) bytes read'\n"
                       "context = '^reading (?P<file>\\S+)'\n"
                       "unless = { file = '\\.dtb$' }\nat_least = { bytes = 1000 }\n")
    analysis = analyze(b"reading a.dtb\n5000 bytes read\n10 bytes read\n0 bytes read\n", profile)
    assert [(m.id, m.line, m.values) for m in analysis.milestones] == [
        ("load", 4, {"bytes": 0})]                                  # 0 is no size
    reasons = [(r.line, r.reason) for r in analysis.rejected]
    assert reasons == [(2, "file 'a.dtb' matches '\\\\.dtb$'"), (3, "bytes 10 is below 1000")]


def test_a_recheck_of_the_same_size_moves_the_milestone_to_the_next_hit() -> None:
    profile = _profile('[[milestone]]\nid = "load"\nstage = "bootloader"\n'
                       "match = '^(?P<bytes>\\d+) bytes read'\n"
                       "context = '^## Loading (?P<what>\\w+) from'\n"
                       "recheck = '^Data Size: (?P<bytes>\\d+)'\n"
                       "unless = { what = 'Ramdisk' }\n")
    lines = ["2064 bytes read", "9000 bytes read", "## Loading Ramdisk from x", "Data Size: 2000"]
    assert _ids(profile, *lines) == [[("load", 2)]]
    # another size, or a header that is the kernel's: nothing moves
    assert _ids(profile, *lines[:3], "Data Size: 1234") == [[("load", 1)]]
    assert _ids(profile, *lines[:2], "## Loading Kernel from x", "Data Size: 2000") == \
        [[("load", 1)]]


def test_not_before_takes_back_a_hit_that_came_first() -> None:
    profile = _profile('[[milestone]]\nid = "countdown"\nstage = "bootloader"\n'
                       'match = "^Hit any key"\n\n[[milestone]]\nid = "load"\n'
                       'stage = "bootloader"\nnot_before = ["countdown"]\n'
                       "match = '^\\d+ blocks read'\n")
    analysis = analyze(b"3330 blocks read\nHit any key\n8192 blocks read\n", profile)
    assert [(m.id, m.line) for m in analysis.milestones] == [("countdown", 2), ("load", 3)]
    assert analysis.rejected[0].reason == "it came before countdown (line 2)"


# --- boots: restarts, shared lines, late firmware ------------------------------------------

RESTART = ('[[milestone]]\nid = "banner"\nstage = "bootloader"\nnew_boot = true\n'
           'match = "^Loader"\n\n[[milestone]]\nid = "shell"\nstage = "userspace"\n'
           'match = "^# $"\n\n[[milestone]]\nid = "rom"\nstage = "firmware"\n'
           'match = "^ROM"\n\n[[milestone]]\nid = "restart"\nstage = "shutdown"\n'
           'ends_boot = true\nmatch = "^Restarting"\n')


def test_a_restart_ends_the_boot_and_the_next_line_with_text_starts_one() -> None:
    profile = _profile(RESTART)
    analysis = analyze(b"Loader\n# \nRestarting\n\n\nnoise\nLoader\n", profile)
    assert [(b.first_line, [m.id for m in b.milestones]) for b in analysis.boots] == [
        (1, ["banner", "shell", "restart"]), (6, ["banner"])]


def test_a_restart_first_or_inside_the_firmware_is_the_same_boot() -> None:
    profile = _profile(RESTART)
    # a measured boot's session starts with the reset bootlab typed
    assert len(analyze(b"Restarting\nLoader\n", profile).boots) == 1
    # a ROM resetting itself for an erratum
    assert len(analyze(b"ROM\nRestarting\nROM\nLoader\n", profile).boots) == 1


def test_a_shared_line_does_not_show_its_stage_was_reached() -> None:
    body = ('[[milestone]]\nid = "banner"\nstage = "bootloader"\nnew_boot = true\n'
            'match = "^Loader"\n\n[[milestone]]\nid = "ubi"\nstage = "kernel"\n'
            'occurrence = "last"\nshared = true\nmatch = "^ubi0: attached"\n\n'
            '[[milestone]]\nid = "kernel"\nstage = "kernel"\nmatch = "^Linux"\n\n'
            '[[milestone]]\nid = "tee"\nstage = "firmware"\nnew_boot = true\nlate = true\n'
            'match = "^TEE"\n')
    profile = _profile(body)
    # the bootloader's UBI attach, then a banner of the same boot? no: only one banner here
    assert _ids(profile, "Loader", "ubi0: attached", "TEE", "Linux", "ubi0: attached") == [
        [("banner", 1), ("ubi", 2), ("tee", 3), ("kernel", 4)]]
    # late firmware after the kernel's own lines is a new boot
    assert len(analyze(b"Loader\nLinux\nTEE\n", profile).boots) == 2


def test_kernel_lines_are_passed_over_only_where_the_kernel_prints_no_times() -> None:
    body = ('kernel_lines = [\'^[a-z]+: \']\n\n[[milestone]]\nid = "go"\n'
            'stage = "bootloader"\nmatch = "^Starting"\n\n[[milestone]]\nid = "done"\n'
            'stage = "kernel"\nmatch = "^Freeing"\n\n[[milestone]]\nid = "init"\n'
            'stage = "userspace"\nmatch = "^INIT"\n[milestone.fallback]\n'
            'after = ["done"]\n')
    profile = parse_profile('[profile]\nname = "t"\n' + body, "t.toml")
    plain = _ids(profile, "Starting", "Freeing", "random: crng", "mount: failed", "rcS up")
    assert plain == [[("go", 1), ("done", 2), ("init", 5)]]
    stamped = _ids(profile, "Starting", "[    1.000000] Freeing", "[    1.100000] random: x",
                   "mount: failed")
    assert stamped == [[("go", 1), ("done", 2), ("init", 4)]]


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("entry", "reason"), [
    ('unless = "x"', "unless must be a table of value = pattern"),
    ("unless = { a = '(' }", "bad unless pattern"),
    ('at_least = { a = "big" }', "at_least must be a table of value = number"),
    ('not_before = "x"', "not_before must be a list of milestone ids"),
    ('not_before = ["x"]', "not_before names unknown milestone 'x'"),
    ("context = ['(']", "bad pattern"),
    ('weak = 3', "'weak' must be a pattern or a list of them"),
    ("late = 1", "late must be true or false"),
    ('merge = "yes"', "merge must be true or false"),
])
def test_bad_rules_name_the_file_and_line(tmp_path: Path, entry: str, reason: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f'{HEAD}[[milestone]]\nid = "a"\nmatch = "^a"\n{entry}\n')
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path))
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"{path}:")
