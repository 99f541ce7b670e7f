"""Settings as data: loading, applicability from real logs, and the exact commands planned."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from support.paths import example_sessions
from support.qemu_env import QEMU_ARGS, QEMU_ENV

from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.applicability import applicable
from bootlab.core.board.facts import BoardFacts, facts_from_log
from bootlab.core.board.kernel_read import kernel_reads, trimmed_read_size
from bootlab.core.board.plan import plan
from bootlab.core.board.settings import (
    Setting,
    SettingsError,
    load_settings,
    parse_settings,
    settings_dirs,
)
from bootlab.core.capture.sources import open_source

# The QEMU board's real calibration line (arch timer: the loop is skipped).
QEMU_CALIBRATE = ("[    0.008487] Calibrating delay loop (skipped), value calculated using "
                  "timer frequency.. 125.00 BogoMIPS (lpj=250000)")
QEMU_PRESET = ("[    0.008511] Calibrating delay loop (skipped) preset value.. 125.00 BogoMIPS "
               "(lpj=250000)")

NAND_LOG = """\
U-Boot 2016.01 (Jan 01 2020 - 00:00:00 +0000)

DRAM:  256 MiB
NAND:  256 MiB
Hit any key to stop autoboot:  0

NAND read: device 0 offset 0x280000, size 0x400000
 4194304 bytes read: OK
## Booting kernel from Legacy Image at 82000000 ...
   Image Name:   Linux-4.19
   Data Size:    1246156 Bytes = 1.2 MiB
   Verifying Checksum ... OK
   Loading Kernel Image ... OK

Starting kernel ...

[    0.000000] Booting Linux on physical CPU 0x0
[    0.000000] Kernel command line: console=ttyS0,115200 root=/dev/mtdblock3 rootfstype=jffs2
[    0.001000] Calibrating delay loop... 2013.49 BogoMIPS (lpj=7864320)
[    1.000000] VFS: Mounted root (jffs2 filesystem) readonly on device 31:3.
"""
NAND_ENV = {
    "bootcmd": "run nandboot",
    "nandboot": "run args; nand read ${loadaddr} 0x280000 0x400000; bootm ${loadaddr}",
    "args": "setenv bootargs ${bootargs} ${extra}",
    "bootargs": "console=ttyS0,115200 root=/dev/mtdblock3 rootfstype=jffs2",
    "bootdelay": "3",
    "baudrate": "115200",
}


@pytest.fixture(scope="module")
def builtin() -> list[Setting]:
    return load_settings()


def by_id(settings: list[Setting], ident: str) -> Setting:
    return next(s for s in settings if s.id == ident)


@pytest.fixture(scope="module")
def qemu_facts() -> BoardFacts:
    (path, *_) = example_sessions("default")
    return facts_from_log(open_source(path).data.decode("utf-8"), QEMU_ENV)


@pytest.fixture(scope="module")
def nand_facts() -> BoardFacts:
    return facts_from_log(NAND_LOG, NAND_ENV)


@pytest.mark.parametrize(("image", "page", "size"), [
    (1_246_156, 2048, 0x131000),      # 609 pages hold header + data, plus one spare
    (2048 - 64, 2048, 2 * 2048),       # exactly one page with the header, plus one
    (2048 - 63, 2048, 3 * 2048),
    (1_246_156, 4096, 0x132000),
    (1_246_156, 512, 0x130800),
])
def test_trimmed_read_size(image: int, page: int, size: int) -> None:
    assert trimmed_read_size(image, page) == size


def test_trimmed_read_size_without_header_or_spare() -> None:
    assert trimmed_read_size(4096, 2048, spare_pages=0, header=0) == 4096


def test_builtin_settings_ship_as_package_data(builtin: list[Setting]) -> None:
    assert (resources.files("bootlab") / "settings" / "builtin.toml").is_file()
    ids = [s.id for s in builtin]
    for wanted in ("bootdelay", "verify", "silent", "baudrate", "read_trim", "quiet", "lpj",
                   "loglevel", "printk_time", "initcall_debug", "rootwait", "no_rootdelay",
                   "rootfstype", "cmdline_extra"):
        assert wanted in ids
    assert len({s.key for s in builtin}) == len(builtin)
    assert all(len(s.key) == 1 and s.title and s.help for s in builtin)
    assert all(s.source == "<built-in settings>" and s.line for s in builtin)


def test_facts_from_the_real_qemu_boot(qemu_facts: BoardFacts) -> None:
    assert qemu_facts.calibrate == QEMU_CALIBRATE
    assert qemu_facts.lpj == 250000 and qemu_facts.calibration_skipped
    assert not qemu_facts.lpj_preset
    assert qemu_facts.rootfs_type == "ext4"                 # "EXT4-fs (vda2): mounted ..."
    assert qemu_facts.image_bytes == 32956352 and qemu_facts.image_format == "fit"
    assert qemu_facts.loaded_bytes == 34514312
    assert qemu_facts.kernel_cmdline == QEMU_ARGS
    assert {"calibrate", "starting_kernel", "login"} <= qemu_facts.milestones


def test_lpj_is_not_applicable_on_the_qemu_board(builtin: list[Setting],
                                                 qemu_facts: BoardFacts) -> None:
    ok, why = applicable(by_id(builtin, "lpj"), qemu_facts)
    assert not ok
    assert why.startswith("not applicable: calibration is skipped on this CPU")
    assert "lpj= saves nothing" in why
    # The calibrate line alone says the same.
    assert not applicable(by_id(builtin, "lpj"), facts_from_log([QEMU_CALIBRATE]))[0]


def test_lpj_applies_with_the_measured_value(builtin: list[Setting],
                                             nand_facts: BoardFacts) -> None:
    assert nand_facts.lpj == 7864320 and not nand_facts.calibration_skipped
    ok, why = applicable(by_id(builtin, "lpj"), nand_facts)
    assert ok and "lpj=7864320" in why
    result = plan(builtin, {"lpj": True}, NAND_ENV, nand_facts)
    assert result.commands == ["setenv extra lpj=7864320"]     # bootcmd appends ${extra}
    assert result.revert == ["setenv extra"]
    assert result.cmdline == NAND_ENV["bootargs"] + " lpj=7864320"


def test_lpj_preset_and_quiet_logs(builtin: list[Setting]) -> None:
    preset = facts_from_log([QEMU_PRESET], QEMU_ENV)
    assert preset.lpj_preset and not preset.calibration_skipped
    assert applicable(by_id(builtin, "lpj"), preset)[0]
    quiet = facts_from_log(["Starting kernel ...", "[initramfs] /init started"], QEMU_ENV)
    ok, why = applicable(by_id(builtin, "lpj"), quiet)
    assert not ok and "boot once without quiet" in why


def test_facts_from_an_analysis(nand_facts: BoardFacts) -> None:
    analysis = analyze(NAND_LOG.encode(), load_profile("linux"))
    facts = facts_from_log(analysis, NAND_ENV)
    assert (facts.lpj, facts.image_bytes, facts.image_format, facts.rootfs_type,
            facts.loaded_bytes) == (7864320, 1246156, "legacy", "jffs2", 4194304)
    assert facts.kernel_cmdline is None        # not a milestone: only the full log has it
    assert nand_facts.kernel_cmdline == "console=ttyS0,115200 root=/dev/mtdblock3 rootfstype=jffs2"


def test_bootdelay_minus_two_is_refused_unless_forced(builtin: list[Setting],
                                                      qemu_facts: BoardFacts) -> None:
    refused = plan(builtin, {"bootdelay": "-2"}, QEMU_ENV, qemu_facts)
    assert refused.commands == []
    assert refused.skipped["bootdelay"].startswith("refused: bootdelay=-2")
    assert "locks the console out" in refused.skipped["bootdelay"]
    assert any("refused" in w for w in refused.warnings)
    forced = plan(builtin, {"bootdelay": "-2"}, QEMU_ENV, qemu_facts, force={"bootdelay"})
    assert forced.commands == ["setenv bootdelay -2"]
    assert plan(builtin, {"bootdelay": True}, QEMU_ENV, qemu_facts).commands \
        == ["setenv bootdelay 0"]
    bad = plan(builtin, {"bootdelay": "soon"}, QEMU_ENV, qemu_facts)
    assert bad.commands == [] and "not a valid value" in bad.skipped["bootdelay"]


def test_silent_off_deletes_the_variable(builtin: list[Setting],
                                         qemu_facts: BoardFacts) -> None:
    env = {**QEMU_ENV, "silent": "0"}   # any value silences, even 0
    off = plan(builtin, {"silent": False}, env, qemu_facts)
    assert off.commands == ["setenv silent"] and off.revert == ["setenv silent 0"]
    assert off.record["bootloader"]["silent"] is None
    on = plan(builtin, {"silent": True}, QEMU_ENV, qemu_facts)
    assert on.commands == ["setenv silent 1"] and on.revert == ["setenv silent"]
    assert any("CONFIG_SILENT_CONSOLE" in w for w in on.warnings)
    assert plan(builtin, {"silent": False}, QEMU_ENV, qemu_facts).commands == []


def test_verify_and_bootdelay_off(builtin: list[Setting], qemu_facts: BoardFacts) -> None:
    result = plan(builtin, {"verify": True, "bootdelay": False}, QEMU_ENV, qemu_facts)
    assert result.commands == ["setenv verify no"]   # bootdelay off: left as the board has it


def test_baudrate_rewrites_console_and_comes_last(builtin: list[Setting],
                                                  qemu_facts: BoardFacts) -> None:
    result = plan(builtin, {"baudrate": "921600", "quiet": True}, QEMU_ENV, qemu_facts,
                  persist=True)
    assert result.commands == [
        f"setenv bootargs '{QEMU_ARGS.replace('115200', '921600')} quiet'",
        "setenv baudrate 921600",
        "saveenv",
    ]
    assert result.revert == [f"setenv bootargs '{QEMU_ARGS}'", "setenv baudrate 115200",
                             "saveenv"]
    assert result.baud == 921600 and result.persist
    assert any("console= on the kernel command line is rewritten to 921600" in w
               for w in result.warnings)
    assert result.cmdline is not None and "console=ttyAMA0,921600" in result.cmdline


def test_baudrate_without_a_console_rate_warns(builtin: list[Setting]) -> None:
    env = {"bootargs": "root=/dev/sda1"}
    result = plan(builtin, {"baudrate": "230400"}, env, BoardFacts())
    assert result.commands == ["setenv baudrate 230400"]
    assert any("no console=DEVICE,230400" in w for w in result.warnings)


def test_kernel_read_trimmed_to_the_image(builtin: list[Setting],
                                          nand_facts: BoardFacts) -> None:
    setting = by_id(builtin, "read_trim")
    ok, why = applicable(setting, nand_facts)
    assert ok and "0x400000" in why and "0x131000" in why
    result = plan(builtin, {"read_trim": True}, NAND_ENV, nand_facts)
    assert result.commands == [
        "setenv nandboot 'run args; nand read ${loadaddr} 0x280000 0x131000; "
        "bootm ${loadaddr}'"]
    assert result.revert == [f"setenv nandboot '{NAND_ENV['nandboot']}'"]
    bigger_pages = plan(builtin, {"read_trim": "4096"}, NAND_ENV, nand_facts)
    assert "0x132000" in bigger_pages.commands[0]


@pytest.mark.parametrize(("command", "loaded", "trimmed"), [
    ("sf read ${loadaddr} 0x100000 0x400000", "SF: 4194304 bytes @ 0x100000 Read: OK",
     "sf read ${loadaddr} 0x100000 0x131000"),
    ("mmc read ${loadaddr} 0x800 0x2000", "8192 blocks read: OK",
     "mmc read ${loadaddr} 0x800 0x988"),     # 0x131000 bytes = 0x988 blocks of 512
])
def test_sf_and_mmc_reads(builtin: list[Setting], command: str, loaded: str,
                          trimmed: str) -> None:
    env = {"bootcmd": f"{command}; bootm ${{loadaddr}}"}
    log = NAND_LOG.replace(" 4194304 bytes read: OK", loaded)
    result = plan(builtin, {"read_trim": True}, env, facts_from_log(log, env))
    assert result.commands == [f"setenv bootcmd '{trimmed}; bootm ${{loadaddr}}'"]


def test_read_trim_not_applicable(builtin: list[Setting], qemu_facts: BoardFacts,
                                  nand_facts: BoardFacts) -> None:
    setting = by_id(builtin, "read_trim")
    ok, why = applicable(setting, qemu_facts)       # the QEMU board loads a file
    assert not ok and "not read from raw flash" in why
    fit = facts_from_log(NAND_LOG.replace("Legacy Image", "FIT Image"), NAND_ENV)
    assert "FIT image" in applicable(setting, fit)[1]
    small = {**NAND_ENV, "nandboot": "nand read ${loadaddr} 0x280000 0x131000; bootm"}
    assert "already no bigger" in applicable(setting, nand_facts.with_env(small))[1]
    two = {**NAND_ENV, "nandboot": "nand read 0x81000000 0x200000 0x80000; "
                                   "nand read 0x82000000 0x280000 0x500000; bootm"}
    assert "several flash reads" in applicable(setting, nand_facts.with_env(two))[1]
    # The log's read size picks the kernel's read among several.
    three = {**two, "nandboot": two["nandboot"].replace("0x500000", "0x400000")}
    assert applicable(setting, nand_facts.with_env(three))[0]
    assert len(kernel_reads(three)) == 2


def test_cmdline_settings_go_where_bootcmd_takes_them(builtin: list[Setting],
                                                      nand_facts: BoardFacts) -> None:
    result = plan(builtin, {"quiet": True, "rootfstype": True, "loglevel": "1",
                            "cmdline_extra": "mtdparts=nand:2M(u-boot) foo"},
                  NAND_ENV, nand_facts)
    # quiet, loglevel and the free-form ones are added to ${extra}; rootfstype is already
    # jffs2 in bootargs, as the log says.
    assert result.commands == ["setenv extra 'quiet loglevel=1 mtdparts=nand:2M(u-boot) foo'"]
    assert result.record["bootloader"]["extra"] == "quiet loglevel=1 mtdparts=nand:2M(u-boot) foo"
    off = plan(builtin, {"rootfstype": False}, NAND_ENV, nand_facts)
    assert off.commands == ["setenv bootargs 'console=ttyS0,115200 root=/dev/mtdblock3'"]


def test_initcall_debug_brings_ignore_loglevel_and_warns(builtin: list[Setting],
                                                         qemu_facts: BoardFacts) -> None:
    result = plan(builtin, {"initcall_debug": True, "quiet": True}, QEMU_ENV, qemu_facts)
    assert result.cmdline == f"{QEMU_ARGS} quiet initcall_debug ignore_loglevel"
    assert any("overrides quiet" in w for w in result.warnings)


def test_rootdelay_is_dropped_only_where_present(builtin: list[Setting],
                                                 qemu_facts: BoardFacts) -> None:
    setting = by_id(builtin, "no_rootdelay")
    assert not applicable(setting, qemu_facts)[0]
    env = {**QEMU_ENV, "bootargs": QEMU_ARGS + " rootdelay=5"}
    assert applicable(setting, qemu_facts.with_env(env))[0]
    assert plan(builtin, {"no_rootdelay": True}, env, qemu_facts).commands \
        == [f"setenv bootargs '{QEMU_ARGS}'"]


def test_record_says_what_is_in_force(builtin: list[Setting], qemu_facts: BoardFacts) -> None:
    nothing = plan(builtin, {}, QEMU_ENV, qemu_facts)
    assert nothing.commands == [] and nothing.revert == []
    assert nothing.record == {
        "bootloader": {"bootdelay": "2", "verify": None, "silent": None, "baudrate": "115200",
                       "bootargs": QEMU_ARGS},
        "cmdline": QEMU_ARGS, "chosen": {}}
    result = plan(builtin, {"bootdelay": True, "quiet": True, "lpj": True}, QEMU_ENV,
                  qemu_facts)
    assert result.record["bootloader"]["bootdelay"] == "0"
    assert result.record["cmdline"] == QEMU_ARGS + " quiet"
    assert result.record["chosen"] == {"bootdelay": True, "quiet": True}   # lpj: skipped
    assert result.env_after["bootdelay"] == "0" and QEMU_ENV["bootdelay"] == "2"


def test_simple_parser_boards_get_simple_quoting(builtin: list[Setting]) -> None:
    facts = facts_from_log(NAND_LOG, NAND_ENV, hush=False)
    result = plan(builtin, {"quiet": True, "loglevel": True}, NAND_ENV, facts)
    assert result.commands == ["setenv extra quiet loglevel=3"]
    assert not applicable(Setting("x", "x", "x", "uboot_var", var="x", applies_when=("hush",)),
                          facts)[0]


def test_unknown_choice_and_long_commands(builtin: list[Setting],
                                          qemu_facts: BoardFacts) -> None:
    with pytest.raises(ValueError, match="unknown setting"):
        plan(builtin, {"turbo": True}, QEMU_ENV, qemu_facts)
    result = plan(builtin, {"cmdline_extra": "x=" + "y" * 200}, QEMU_ENV, qemu_facts)
    assert any("line buffer" in w for w in result.warnings)
    needs = plan(builtin, {"cmdline_extra": True}, QEMU_ENV, qemu_facts)
    assert needs.skipped == {"cmdline_extra": "needs a value"}
    words = plan(builtin, {"baudrate": "fast", "read_trim": "big"}, QEMU_ENV, qemu_facts)
    assert words.skipped == {"baudrate": "'fast' is not a whole number",
                             "read_trim": "'big' is not a whole number"}


USER_SETTINGS = """\
[[setting]]
id = "fastboot_off"
key = "F"
title = "No fastboot check"
kind = "uboot_var"
var = "fastboot_check"
value = "0"
off = "1"
applies_when = ["var:fastboot_check", 'log:^Fastboot: ']

[[setting]]
id = "quiet"
key = "q"
title = "Quiet kernel (my board)"
kind = "cmdline_flag"
name = "quiet"
also = ["vt.global_cursor_default=0"]
"""


def test_a_user_settings_file_adds_and_replaces(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = tmp_path / "sessions"
    monkeypatch.setenv("BOOTLAB_CONFIG_DIR", str(tmp_path / "config"))
    dirs = settings_dirs(sessions)
    assert dirs == [sessions / "settings", tmp_path / "config" / "settings"]
    dirs[1].mkdir(parents=True)
    (dirs[1] / "board.toml").write_text(USER_SETTINGS)
    settings = load_settings(dirs)
    assert settings[-1].id == "fastboot_off" and settings[-1].source.endswith("board.toml")
    quiet = by_id(settings, "quiet")
    assert quiet.title == "Quiet kernel (my board)" and settings.index(quiet) == 5
    env = {"fastboot_check": "1", "bootargs": "root=/dev/mmcblk0p2"}
    facts = facts_from_log(["Fastboot: Pressed key"], env)
    assert applicable(settings[-1], facts) == (
        True, "fastboot_check is set in the environment; "
              "the log has line matching '^Fastboot: '")
    result = plan(settings, {"fastboot_off": True, "quiet": True}, env, facts)
    assert result.commands == [
        "setenv fastboot_check 0",
        "setenv bootargs 'root=/dev/mmcblk0p2 quiet vt.global_cursor_default=0'"]
    assert plan(settings, {"fastboot_off": False}, env, facts).commands == []
    assert plan(settings, {"fastboot_off": False}, {**env, "fastboot_check": "0"},
                facts).commands == ["setenv fastboot_check 1"]
    assert not applicable(settings[-1], facts_from_log(["nothing"], env))[0]
    # The nearer folder wins.
    dirs[0].mkdir(parents=True)
    (dirs[0] / "near.toml").write_text(USER_SETTINGS.replace("(my board)", "(near)"))
    assert by_id(load_settings(dirs), "quiet").title == "Quiet kernel (near)"


@pytest.mark.parametrize(("text", "line", "reason"), [
    ('[[setting]]\nid = "x"\nkey = "x"\ntitle = "X"\nkind = "uboot_var\n', 5,
     "not valid TOML"),
    ('[[setting]]\nid = "a"\nkey = "a"\ntitle = "A"\nkind = "cmdline_flag"\nname = "a"\n\n'
     '[[setting]]\nid = "b"\nkey = "b"\ntitle = "B"\nkind = "magic"\n', 9,
     "setting 'b': kind 'magic' is not one of"),
    ('[[setting]]\nid = "c"\nkey = "cc"\ntitle = "C"\nkind = "uboot_var"\nvar = "c"\n', 2,
     "key must be one printable character"),
    ('[[setting]]\nid = "d"\nkey = "d"\ntitle = "D"\nkind = "uboot_var"\n', 2,
     "needs var ="),
    ('[[setting]]\nid = "e"\nkey = "e"\ntitle = "E"\nkind = "cmdline_flag"\nname = "e"\n'
     'applies_when = ["sunny"]\n', 2, "unknown condition 'sunny'"),
    ('[[setting]]\nid = "f"\nkey = "f"\ntitle = "F"\nkind = "cmdline_flag"\nname = "f"\n'
     'applies_when = ["log:("]\n', 2, "bad log pattern"),
    ('[[setting]]\nid = "g"\nkey = "g"\ntitle = "G"\nkind = "read_trim"\npage = 0\n', 2,
     "page must be a whole number >= 1"),
    ('[[setting]]\nid = "h"\nkey = "h"\ntitle = "H"\nkind = "cmdline_flag"\nname = "h"\n'
     'colour = "red"\n', 7, "unknown key(s) colour"),   # the key's own line
    ('[setting]\nid = "i"\n', 1, "[[setting]] tables"),
    ('[[setting]]\nid = "Bad-Id"\n', 2, "lower_snake_case"),
])
def test_bad_settings_are_reported_with_file_and_line(tmp_path: Path, text: str, line: int,
                                                      reason: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SettingsError) as caught:
        load_settings([tmp_path])
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert reason in str(caught.value)
    assert caught.value.line == line and caught.value.source == str(path)


def test_clashing_keys_and_unknown_conflicts(tmp_path: Path) -> None:
    (tmp_path / "clash.toml").write_text(
        '[[setting]]\nid = "mine"\nkey = "q"\ntitle = "Mine"\nkind = "cmdline_flag"\n'
        'name = "mine"\n')
    with pytest.raises(SettingsError, match=r"clash.toml:2: key 'q' of 'mine' is already used "
                                            r"by 'quiet'"):
        load_settings([tmp_path])
    (tmp_path / "clash.toml").write_text(
        '[[setting]]\nid = "mine"\nkey = "m"\ntitle = "Mine"\nkind = "cmdline_flag"\n'
        'name = "mine"\nconflicts = { nothing = "x" }\n')
    with pytest.raises(SettingsError, match="conflicts names unknown setting 'nothing'"):
        load_settings([tmp_path])
    with pytest.raises(SettingsError, match="defined twice"):
        parse_settings('[[setting]]\nid = "a"\nkey = "a"\ntitle = "A"\nkind = "cmdline_text"\n'
                       '[[setting]]\nid = "a"\nkey = "b"\ntitle = "A"\nkind = "cmdline_text"\n')


def test_quotes_that_hush_would_re_read_are_warned_about(builtin: list[Setting],
                                                          qemu_facts: BoardFacts,
                                                          nand_facts: BoardFacts) -> None:
    # On the QEMU board `x=it's` is stored exactly, but boot.scr's `test -z "${bootargs}"`
    # then fails with "syntax error" and the kernel gets the script's default line.
    result = plan(builtin, {"cmdline_extra": "x=it's"}, QEMU_ENV, qemu_facts)
    assert result.commands == [f"setenv bootargs '{QEMU_ARGS} x=it'\\''s'"]
    assert any(w.startswith("bootargs holds ':") and "syntax error" in w
               for w in result.warnings)
    # A double quote survives an expansion inside double quotes (seen on the board) ...
    quoted = plan(builtin, {"cmdline_extra": 'x="a b"'}, QEMU_ENV, qemu_facts)
    assert not any("re-reads" in w for w in quoted.warnings)
    # ... but not `setenv bootargs ${bootargs} ${extra}`, which re-reads ${extra} unquoted.
    nand = plan(builtin, {"cmdline_extra": 'x="a b"'}, NAND_ENV, nand_facts)
    assert nand.commands == ["setenv extra 'x=\"a b\"'"]
    assert any(w.startswith('extra holds ":') for w in nand.warnings)
    assert not any("re-reads" in w for w in
                   plan(builtin, {"quiet": True}, NAND_ENV, nand_facts).warnings)
