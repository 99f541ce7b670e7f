"""Evidence per A/B boot (bootlab/core/board/verify.py): each variant's claims held against the
bundled boots of the real QEMU board (factory, quiet, bootdelay=0), `/proc/cmdline` where the
log cannot tell, where the arguments come from, and the per-variant summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from support.fake_board import DEFAULT_ENV
from support.paths import example_sessions

from bootlab.core.analysis.bootlog import BootLog, read_boot
from bootlab.core.board.argsource import ArgSource, BootFile
from bootlab.core.board.settings import Setting, State, load_settings
from bootlab.core.board.verify import (
    Check,
    Claim,
    arguments_source,
    check_boot,
    contradiction_text,
    recorded_checks,
    run_claims,
    summary_lines,
    wants_proc_cmdline,
)
from bootlab.core.capture.session import load_session

SETTINGS = {s.id: s for s in load_settings()}
QUIET_ENV = {**DEFAULT_ENV, "bootargs": DEFAULT_ENV["bootargs"] + " quiet"}


def boot(label: str, replace: tuple[bytes, bytes] | None = None) -> BootLog:
    data = load_session(example_sessions(label)[0]).data
    return read_boot(data.replace(*replace) if replace else data)


def claims(variants: Mapping[str, Sequence[tuple[str, Setting, State]]],
           env: Mapping[str, str] = DEFAULT_ENV) -> dict[str, tuple[Claim, ...]]:
    return run_claims(variants, {name: env for name in variants})


def checked(claims_of: Sequence[Claim], log: BootLog, proc: str | None = None) -> dict[str, Check]:
    return {check.label: check for check in check_boot(claims_of, log, proc)}


QUIET_RUN = claims({"base": [], "quiet": [("quiet", SETTINGS["quiet"], True)]})


def test_quiet_is_in_force_where_the_kernel_lines_are_gone() -> None:
    check = checked(QUIET_RUN["quiet"], boot("quiet"))["quiet"]
    assert (check.shown, check.contradicted) == ("in force", False)
    assert "no kernel info line" in check.note and check.text == "Starting kernel ..."


def test_base_ran_without_quiet_as_the_printed_command_line_shows() -> None:
    check = checked(QUIET_RUN["base"], boot("default"))["quiet"]
    assert (check.wanted, check.shown, check.contradicted) == (False, "not in force", False)
    assert check.note == "no quiet on the command line the kernel printed"
    assert check.text is not None and "Kernel command line: console=ttyAMA0" in check.text


def test_a_quiet_variant_booted_loud_is_contradicted_with_its_line() -> None:
    checks = check_boot(QUIET_RUN["quiet"], boot("default"))
    assert [(c.label, c.shown, c.contradicted) for c in checks] == [
        ("quiet", "not in force", True)]
    text = contradiction_text("quiet", 2, checks, "bootargs as it is")
    assert text.startswith("quiet run 2: expected quiet in force, the boot shows it not in "
                           "force: no quiet on the command line the kernel printed (line ")
    assert "Kernel command line: console=ttyAMA0,115200" in text
    assert text.endswith("; bootargs as it is")
    # A base boot that came up quiet contradicts the base: it ran with the setting.
    base = check_boot(QUIET_RUN["base"], boot("quiet"), "console=ttyAMA0 quiet")
    assert [(c.shown, c.contradicted) for c in base] == [("in force", True)]
    assert base[0].note == "quiet on /proc/cmdline (read after login)"


def test_bootdelay_read_from_the_countdown_start() -> None:
    run = claims({"base": [], "bd0": [("bootdelay=0", SETTINGS["bootdelay"], True)]})
    zero = checked(run["bd0"], boot("bootdelay0"))["bootdelay=0"]
    assert (zero.shown, zero.line, zero.contradicted) == ("in force", 13, False)
    assert zero.note == "the autoboot countdown started at 0"
    base = checked(run["base"], boot("default"))["bootdelay=0"]
    assert (base.shown, base.note, base.contradicted) == (
        "not in force", "the autoboot countdown started at 2", False)
    assert checked(run["base"], boot("bootdelay0"))["bootdelay=0"].contradicted
    # Another value than the setting's own: the countdown's start is compared with it.
    one = claims({"bd1": [("bootdelay=1", SETTINGS["bootdelay"], "1")]})["bd1"]
    assert checked(one, boot("default"))["bootdelay=1"].contradicted
    assert checked(one, boot("bootdelay0"))["bootdelay=1"].shown == "not in force"


def test_verify_lines_show_checksums_were_checked() -> None:
    run = claims({"base": [], "noverify": [("verify=no", SETTINGS["verify"], True)]})
    check = checked(run["noverify"], boot("default"))["verify=no"]
    assert (check.shown, check.contradicted) == ("not in force", True)
    assert check.note == "U-Boot verified the image" and "Verifying Hash" in (check.text or "")
    assert not checked(run["base"], boot("default"))["verify=no"].contradicted
    # The same boot without the verify lines: the image was loaded unverified.
    skipped = boot("default", (b"   Verifying Hash Integrity ... sha256+ OK",
                               b"   Loading the subimage"))
    quiet_verify = boot("default", (b"Verifying Hash Integrity ... OK", b"checked later"))
    assert checked(run["noverify"], quiet_verify)["verify=no"].shown == "not in force"
    assert checked(run["noverify"], skipped)["verify=no"].shown == "not in force"


def test_lpj_preset_and_initcall_lines() -> None:
    run = claims({"base": [], "fast": [("lpj", SETTINGS["lpj"], True),
                                       ("initcall_debug", SETTINGS["initcall_debug"], True)]})
    preset = boot("default", (
        b"Calibrating delay loop (skipped), value calculated using timer frequency..",
        b"Calibrating delay loop (skipped) preset value.."))
    found = checked(run["fast"], preset)
    assert (found["lpj"].shown, found["lpj"].note) == (
        "in force", "the kernel used the preset lpj=250000")
    assert found["initcall_debug"].shown == "not in force"  # not on the printed line
    calls = boot("default", (b"Run /init as init process",
                             b"calling  foo_init+0x0/0x40 @ 1\r\nRun /init as init process"))
    initcalls = checked(run["fast"], calls)["initcall_debug"]
    assert initcalls.shown == "in force"
    assert (initcalls.text or "").endswith("] calling  foo_init+0x0/0x40 @ 1")
    assert checked(run["base"], boot("default"))["lpj"].shown == "not in force"


def test_missing_kernel_lines_prove_no_setting_a_variant_runs_without() -> None:
    # quiet and loglevel=3 both hide the kernel's info lines: for the quiet variant, loglevel
    # is not shown by them; /proc/cmdline after login tells.
    run = claims({"q": [("quiet", SETTINGS["quiet"], True)],
                  "ll": [("loglevel=3", SETTINGS["loglevel"], True)]})
    found = checked(run["q"], boot("quiet"))
    assert (found["quiet"].shown, found["loglevel=3"].shown) == ("in force", "not shown")
    assert "another setting may cause too" in found["loglevel=3"].note
    assert wants_proc_cmdline(run["q"], check_boot(run["q"], boot("quiet")))
    proc = checked(run["q"], boot("quiet"), QUIET_ENV["bootargs"])["loglevel=3"]
    assert (proc.shown, proc.contradicted) == ("not in force", False)
    assert proc.note == "no loglevel on /proc/cmdline (read after login)"
    # The loglevel variant's own claim: the lines gone are its evidence.
    assert checked(run["ll"], boot("quiet"))["loglevel=3"].shown == "in force"
    assert checked(run["ll"], boot("default"))["loglevel=3"].contradicted


def test_a_kernel_parameter_the_log_does_not_show_is_read_from_proc_cmdline() -> None:
    run = claims({"base": [], "ll7": [("loglevel=7", SETTINGS["loglevel"], "7")]})
    quiet = boot("quiet")
    first = check_boot(run["ll7"], quiet)
    assert [c.shown for c in first] == ["not shown"] and wants_proc_cmdline(run["ll7"], first)
    assert checked(run["ll7"], quiet, "root=/dev/vda2 loglevel=7")["loglevel=7"].shown == \
        "in force"
    assert checked(run["ll7"], quiet, "root=/dev/vda2 quiet")["loglevel=7"].contradicted
    assert not wants_proc_cmdline(run["ll7"], check_boot(run["ll7"], boot("default")))


def test_the_base_expects_what_its_environment_already_gives() -> None:
    # quiet is in bootargs already: the base is expected quiet too, a variant removing it not.
    remove = Setting("spec_0", key="#0", title="cmdline-=quiet", kind="cmdline_remove",
                     name="quiet")
    run = claims({"base": [], "quiet": [("quiet", SETTINGS["quiet"], True)],
                  "loud": [("cmdline-=quiet", remove, True)]}, QUIET_ENV)
    assert [(c.label, c.wanted) for c in run["base"]] == [("quiet", True)]
    assert [(c.label, c.wanted) for c in run["loud"]] == [("cmdline-=quiet", True)]
    loud = checked(run["loud"], boot("default"))["cmdline-=quiet"]
    assert (loud.shown, loud.contradicted) == ("in force", False)
    assert checked(run["loud"], boot("quiet"), QUIET_ENV["bootargs"])["cmdline-=quiet"] \
        .contradicted
    assert not checked(run["base"], boot("quiet"))["quiet"].contradicted


def test_the_baud_rate_is_in_force_when_the_console_read_the_boot_at_it() -> None:
    run = claims({"base": [], "fast": [("baudrate=230400", SETTINGS["baudrate"], "230400")]})
    (check,) = check_boot(run["fast"], boot("default"), baud=230400)
    assert (check.shown, check.note) == ("in force", "the console was readable at 230400 baud")
    (unswitched,) = check_boot(run["fast"], boot("default"))
    assert unswitched.shown == "not shown"


def test_where_the_arguments_come_from_names_the_boot_script_the_log_shows() -> None:
    source = arguments_source(DEFAULT_ENV, boot("default"))
    assert "bootargs" in source and "/boot.scr on virtio 0:1" in source
    # Found before the run with the boot file read: that is what is said.
    script = BootFile("virtio 0:1", "/boot.scr", "script", "setenv bootargs ${optargs}")
    known = ArgSource("script", True, file=script, variable="optargs", detail="${optargs}")
    assert arguments_source(DEFAULT_ENV, boot("default"), known) == known.describe()
    assert arguments_source(DEFAULT_ENV, boot("default"), ArgSource("bootargs", True)) == source


def test_checks_are_kept_in_the_session_and_summed_per_variant() -> None:
    checks = check_boot(QUIET_RUN["base"], boot("default"))
    meta = {"verified": [c.to_json() for c in checks] + [{"label": "x"}, "junk"]}
    assert recorded_checks(meta) == checks
    assert recorded_checks({}) == [] and recorded_checks({"verified": "no"}) == []
    lines = summary_lines([checks, checks])
    assert lines == ["quiet not in force (no quiet on the command line the kernel printed), "
                     "2 of 2 boots: '[    0.000000] Kernel command line: console=ttyAMA0,"
                     "115200 root=/dev/vda2 rootfstype=ext4 ro rootwait'"]
    # the same line in another boot, stamped at another printk time, is the same evidence
    later = [replace(c, text=c.text.replace("0.000000", "0.038897")) if c.text else c
             for c in checks]
    assert [line.split("boots")[0] for line in summary_lines([later, checks])] == [
        "quiet not in force (no quiet on the command line the kernel printed), 2 of 2 "]
    quiet = check_boot(QUIET_RUN["quiet"], boot("quiet"))
    loud = check_boot(QUIET_RUN["quiet"], boot("default"))
    assert [line.split(" (")[0] + line.split(")")[-1].split(":")[0]
            for line in summary_lines([quiet, loud, quiet])] == [
        "quiet in force, 2 of 3 boots", "quiet not in force, 1 of 3 boots"]
