"""Each setting's state as a boot shows it: real-board corpus logs, the bundled QEMU boots, the
environment and the session header as weaker sources, and the rules' own checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import example_sessions
from support.qemu_env import QEMU_ENV

from bootlab.core.analysis.bootlog import BootLog, read_boot
from bootlab.core.board.evidence import (
    Evidence,
    read_evidence,
    settings_evidence,
    state_word,
    weigh,
)
from bootlab.core.board.settings import Setting, SettingsError, load_settings, parse_settings
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "logs"
SETTINGS = load_settings()


def corpus(name: str) -> BootLog:
    """A log of the real-board corpus (skips when the corpus is not on this machine)."""
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"the real-board corpus is not here ({CORPUS})")
    source = open_source(path)
    return read_boot(source.data, console=source.kind != "dmesg")


def evidence_of(log: BootLog, meta: dict[str, object] | None = None) -> dict[str, Evidence]:
    return settings_evidence(SETTINGS, log, meta)


def session(label: str) -> tuple[BootLog, dict[str, object]]:
    loaded = load_session(example_sessions(label)[0])
    return read_boot(loaded.data), loaded.meta


# --- the real-board corpus -----------------------------------------------------------------

def test_countdown_start_read_before_the_backspaces_draw_over_it() -> None:
    # "Hit any key to stop autoboot:  1 \b\b\b 0 " is shown as 0; the countdown started at 1.
    log = corpus("031-beaglebone-black-am335x-grabserial-spl2014-debian7-uncompressing-nul.log")
    bootdelay = evidence_of(log)["bootdelay"]
    assert (bootdelay.state, bootdelay.value, bootdelay.how, bootdelay.line) == (False, "1",
                                                                                 "log", 19)
    assert bootdelay.text is not None and "stop autoboot" in bootdelay.text
    assert log.first_printed(19).rstrip().endswith(":  1")


def test_quiet_boot_with_stamped_warnings_is_quiet_inferred_and_stamped() -> None:
    # A quiet kernel: no Booting Linux / Linux version / Run /sbin/init, only warnings, stamped.
    found = evidence_of(
        corpus("031-beaglebone-black-am335x-grabserial-spl2014-debian7-uncompressing-nul.log"))
    quiet, stamps = found["quiet"], found["printk_time"]
    assert (quiet.state, quiet.how) == (True, "inferred")
    assert quiet.text == "Starting kernel ..."
    assert (stamps.state, stamps.how) == (True, "log")
    assert stamps.text is not None and stamps.text.startswith("[    0.")


def test_printed_kernel_command_line_decides_kernel_parameters() -> None:
    found = evidence_of(corpus("032-pine64plus-a64-spl2017-extlinux-debian9-systemd.log"))
    # [    0.000000] Kernel command line: root=/dev/mmcblk0p2 console=ttyS0,115200 rootwait rw
    for ident, state in (("quiet", False), ("rootwait", True), ("loglevel", False),
                         ("initcall_debug", False), ("lpj", False)):
        assert (found[ident].state, found[ident].how, found[ident].line) == (state, "log", 53)
    assert "rootwait on the command line the kernel printed" in found["rootwait"].note
    # No printk.time on it, yet every kernel line is stamped: the kernel's default decided.
    stamps = found["printk_time"]
    assert (stamps.state, stamps.line, stamps.kernel_default) == (True, 38, "CONFIG_PRINTK_TIME")
    assert found["bootdelay"].value == "0" and found["bootdelay"].state


def test_the_kernels_command_line_not_the_one_the_bootloader_printed() -> None:
    # Line 230 is Android U-Boot's "Kernel command line:", line 273 the kernel's own.
    found = evidence_of(corpus("038-odroid-c4-s905x3-bl2-uboot2015-android-recovery-crlf.log"))
    assert found["quiet"].line == 273 and found["rootfstype"].value == "ramfs"


def test_verify_lines_show_checksums_are_checked() -> None:
    found = evidence_of(corpus("037-tiny4412-exynos4412-bootm-initrd-busybox-no-uboot-banner.log"))
    verify = found["verify"]
    assert (verify.state, verify.line, verify.text) == (False, 9, "   Verifying Checksum ... OK")
    hashed = evidence_of(
        corpus("033-ekahau-sidekick-imx6q-smarc-uboot2015-yocto-sysvinit-crlf.log"))["verify"]
    assert not hashed.state and "Verifying Hash Integrity" in str(hashed.text)


def test_legacy_image_booted_without_verifying_is_verify_off_inferred() -> None:
    found = evidence_of(corpus("046-hi3518-ipcam-uboot2010-linux3.0-spinor-jffs2-login-ansi.log"))
    verify = found["verify"]
    assert (verify.state, verify.how) == (True, "inferred")
    assert verify.text is not None and verify.text.startswith("## Booting kernel from Legacy")
    assert found["bootdelay"].value == "1"
    # No stamps on its kernel lines, none asked for: printk.time off, by the kernel's default.
    stamps = found["printk_time"]
    assert (stamps.state, stamps.how, stamps.kernel_default) == (False, "log",
                                                                 "CONFIG_PRINTK_TIME")
    assert stamps.text is not None and stamps.text.startswith("Linux version 3.0.8")


def test_no_countdown_after_the_banner_is_no_delay_inferred() -> None:
    # U-Boot 2015.04 goes from its banner to Starting kernel without a countdown.
    bootdelay = evidence_of(
        corpus("033-ekahau-sidekick-imx6q-smarc-uboot2015-yocto-sysvinit-crlf.log"))["bootdelay"]
    assert (bootdelay.state, bootdelay.value, bootdelay.how) == (True, None, "inferred")
    assert bootdelay.text == "U-Boot 2015.04 (Apr 16 2018 - 07:43:23)"
    assert "cannot tell" in bootdelay.note


def test_a_calibrated_delay_loop_is_lpj_off() -> None:
    found = evidence_of(corpus("046-hi3518-ipcam-uboot2010-linux3.0-spinor-jffs2-login-ansi.log"))
    lpj = found["lpj"]
    assert (lpj.state, lpj.line) == (False, 70)
    assert lpj.text is not None and lpj.text.startswith("Calibrating delay loop... 218.72")


def test_autobooting_in_n_seconds_is_the_countdown_start() -> None:
    log = corpus("039-tplink-wa855re-qca9533-uboot1.1.4-lede-squashfs-jffs2.log")
    bootdelay = evidence_of(log)["bootdelay"]
    assert (bootdelay.state, bootdelay.value, bootdelay.line) == (False, "1", 28)


# --- the bundled QEMU boots ----------------------------------------------------------------

def test_factory_boot_of_the_qemu_board() -> None:
    log, meta = session("default")
    found = evidence_of(log, meta)
    assert (found["bootdelay"].state, found["bootdelay"].value) == (False, "2")
    assert found["printk_time"].state and found["printk_time"].kernel_default
    assert not found["quiet"].state and found["quiet"].how == "log"
    baud = found["baudrate"]
    assert (baud.value, baud.how, baud.source) == ("115200", "session", "session")
    assert "cmdline_extra" not in found and "read_trim" not in found


def test_quiet_boots_are_quiet_inferred() -> None:
    log, meta = session("quiet")
    found = evidence_of(log, meta)
    assert (found["quiet"].state, found["quiet"].how, found["quiet"].source) == (
        True, "inferred", "inferred")
    assert "printk_time" not in found  # the kernel printed nothing: its stamps are unknown
    # The session header records the command line bootlab set: the weaker source agrees.
    assert found["quiet"].against == ()
    assert (found["rootwait"].state, found["rootwait"].how) == (True, "session")


def test_bootdelay0_boots_count_down_from_zero() -> None:
    log, meta = session("bootdelay0")
    bootdelay = evidence_of(log, meta)["bootdelay"]
    assert (bootdelay.state, bootdelay.value, bootdelay.line) == (True, "0", 13)


def test_preset_lpj_is_on_with_its_value() -> None:
    loaded = load_session(example_sessions("default")[0])
    data = loaded.data.replace(
        b"Calibrating delay loop (skipped), value calculated using timer frequency..",
        b"Calibrating delay loop (skipped) preset value..")
    lpj = evidence_of(read_boot(data))["lpj"]
    assert (lpj.state, lpj.value, lpj.how) == (True, "250000", "log")


def test_line_numbers_follow_the_stream() -> None:
    lines = load_session(example_sessions("default")[0]).data.split(b"\n")
    log = read_boot(lines, first_line=101)
    assert evidence_of(log)["bootdelay"].line == 113


# --- the environment and the session header -------------------------------------------------

def test_the_log_wins_over_the_environment_and_says_what_disagrees() -> None:
    log, _ = session("default")
    found = read_evidence(SETTINGS, log)
    env = {**QEMU_ENV, "bootdelay": "0"}  # set since the boot, not in force in it
    decided = weigh(SETTINGS, found, env)
    bootdelay = decided["bootdelay"]
    assert (bootdelay.state, bootdelay.value, bootdelay.how) == (False, "2", "log")
    [other] = bootdelay.against
    assert (other.how, other.value, other.state) == ("environment", "0", True)
    # bootargs has no printk.time: the stamps in the log still say on, nothing disagrees.
    stamps = decided["printk_time"]
    assert stamps.state and stamps.how == "log" and stamps.against == ()


def test_the_environment_alone_decides_what_the_log_does_not_show() -> None:
    decided = weigh(SETTINGS, {}, QEMU_ENV)
    assert (decided["bootdelay"].state, decided["bootdelay"].value,
            decided["bootdelay"].how) == (False, "2", "environment")
    assert decided["rootwait"].state and not decided["quiet"].state
    assert (decided["rootfstype"].state, decided["rootfstype"].value) == (True, "ext4")
    assert "cmdline_extra" not in decided
    assert not decided["silent"].state and not decided["verify"].state  # unset: off
    assert "printk_time" not in decided  # not in bootargs: the kernel's default, unknown


def test_unset_bootdelay_is_u_boots_compiled_default() -> None:
    env = {k: v for k, v in QEMU_ENV.items() if k != "bootdelay"}
    assert "bootdelay" not in weigh(SETTINGS, {}, env)


def test_dmesg_counts_only_its_command_line(tmp_path: Path) -> None:
    dmesg = tmp_path / "dmesg.txt"
    dmesg.write_text("[    0.000000] Booting Linux on physical CPU 0x0\n"
                     "[    0.000000] Kernel command line: console=ttyS0 quiet\n"
                     "[    0.100000] Run /sbin/init as init process\n")
    source = open_source(dmesg)
    assert source.kind == "dmesg"
    found = evidence_of(read_boot(source.data, console=False))
    assert found["quiet"].state and found["quiet"].line == 2
    assert "printk_time" not in found  # dmesg prints its own times


def test_state_words() -> None:
    on = Evidence(True, None, "log", "")
    off = Evidence(False, None, "log", "")
    assert [state_word(on, True), state_word(on, False), state_word(off, True),
            state_word(off, False), state_word(None, True), state_word(None, False)] == [
        "on", "on", "off", "n/a", "unknown", "n/a"]


# --- the rules as data ---------------------------------------------------------------------

def rules(evidence: str, extra: str = "") -> list[Setting]:
    return parse_settings(f'[[setting]]\nid = "x"\nkey = "x"\ntitle = "X"\n'
                          f'kind = "cmdline_flag"\nname = "x"\n{extra}evidence = {evidence}\n')


def test_a_users_rule_reads_its_own_line() -> None:
    [setting] = rules('[{ seen = \'log:^myboard: fastboot (\\w+)\', value = \'fastboot (\\w+)\','
                      ' state = "on", note = "fastboot {value}" }]')
    log = read_boot(b"U-Boot 2020.01\nmyboard: fastboot enabled\n")
    decided = settings_evidence([setting], log)["x"]
    assert (decided.state, decided.value, decided.note, decided.line) == (
        True, "enabled", "fastboot enabled", 2)


@pytest.mark.parametrize(("evidence", "reason"), [
    ('[{ seen = "stamps" }]', "give a state"),
    ('[{ seen = "stamps", state = "on" }]', "note is missing"),
    ('[{ unseen = "stamps", state = "on", note = "n" }]', "unseen needs given"),
    ('[{ seen = "stamps", unseen = "stamps", state = "on", note = "n" }]', "either seen or"),
    ('[{ seen = "nowhere:x", state = "on", note = "n" }]', "is not milestone:ID"),
    ('[{ seen = \'log:(a+)+$\', state = "on", note = "n" }]', "bad evidence pattern"),
    ('[{ seen = "stamps", value = "x", note = "n" }]', "needs a group"),
    ('[{ seen = "stamps", state = "maybe", note = "n" }]', "state must be"),
    ('[{ seen = "stamps", state = "on", note = "n", sen = 1 }]', "unknown key(s) sen"),
    ('"stamps"', "evidence must be a list of tables"),
])
def test_bad_rules_say_which_and_why(evidence: str, reason: str) -> None:
    with pytest.raises(SettingsError, match="evidence") as error:
        rules(evidence)
    assert reason in str(error.value) and "<string>:" in str(error.value)


def test_kernel_default_only_for_kernel_parameters() -> None:
    with pytest.raises(SettingsError, match="kernel_default goes with kernel parameters"):
        parse_settings('[[setting]]\nid = "x"\nkey = "x"\ntitle = "X"\nkind = "uboot_var"\n'
                       'var = "x"\nkernel_default = "CONFIG_X"\n')
