"""Where a board's kernel arguments come from (`argsource`), the `md.b` dumps its boot files are
read through (`memdump`, on real output of the QEMU board's U-Boot 2023.01), and the plan that
refuses a kernel parameter the environment cannot carry."""

from __future__ import annotations

import pytest
from support.paths import EXAMPLES, ROOT
from support.qemu_env import QEMU_ARGS, QEMU_ENV

from bootlab.core.board import argsource
from bootlab.core.board.argsource import BootFile, locate, script_setting
from bootlab.core.board.cmdline import Edit
from bootlab.core.board.facts import facts_from_log
from bootlab.core.board.memdump import parse_md, script_text
from bootlab.core.board.plan import plan
from bootlab.core.board.settings import load_settings
from bootlab.core.capture.sources import open_source

DATA = ROOT / "tests" / "data" / "uboot-files"
SCR_DUMP = (DATA / "md-boot-scr.txt").read_text()
CONF_DUMP = (DATA / "md-extlinux-conf.txt").read_text()
EXTLINUX_BOOT = (DATA / "boot-extlinux.txt").read_text()
FACTORY_LOG = open_source(sorted(EXAMPLES.glob("*-default-*.jsonl"))[0]).data.decode("latin-1")
SETTINGS = load_settings()


def _read(dump: str) -> str:
    text = script_text(parse_md(dump)[1])
    assert text is not None
    return text


FACTORY_SCRIPT = _read(SCR_DUMP)
EXTLINUX_CONF = _read(CONF_DUMP)


def test_md_dump_of_a_script_image_gives_its_header_and_text() -> None:
    start, data = parse_md(SCR_DUMP)
    size = int(SCR_DUMP.split(" bytes read")[0].rsplit("\n", 1)[-1])
    assert start == 0x40200000 and len(data) == size
    assert data[:4] == bytes.fromhex("27051956")
    length = int.from_bytes(data[64:68], "big")   # the image table: one script, then 0
    assert len(FACTORY_SCRIPT) == length
    assert FACTORY_SCRIPT.startswith("# boot.scr") and FACTORY_SCRIPT.endswith("}\n")
    assert 'if test -z "${bootargs}"; then setenv bootargs' in FACTORY_SCRIPT


def test_md_dump_of_a_text_file_is_the_text() -> None:
    assert EXTLINUX_CONF.startswith("default linux\n")
    assert f"    append {QEMU_ARGS}\n" in EXTLINUX_CONF


def test_md_dump_with_a_lost_line_is_refused() -> None:
    lines = SCR_DUMP.splitlines()
    garbled = "\n".join(line for line in lines if not line.startswith("40200050:"))
    with pytest.raises(ValueError, match="does not follow"):
        parse_md(garbled)
    with pytest.raises(ValueError, match=r"no md\.b dump"):
        parse_md("=> md.b ${loadaddr} 10\n## Error\n")


def test_other_images_are_not_taken_for_text() -> None:
    _, data = parse_md(SCR_DUMP)
    kernel = bytearray(data)
    kernel[30] = 2                       # ih_type: kernel, not script
    assert script_text(bytes(kernel)) is None
    assert script_text(bytes.fromhex("d00dfeed") + b"\0" * 60) is None


def test_the_factory_script_sets_bootargs_only_when_unset() -> None:
    setting = script_setting(FACTORY_SCRIPT)
    assert setting is not None and setting.when == "unset" and setting.template == QEMU_ARGS


@pytest.mark.parametrize(("script", "when", "template"), [
    ('setenv bootargs "console=ttyS0 root=/dev/mmcblk0p2"\nload mmc 0 ${a} zImage',
     "always", "console=ttyS0 root=/dev/mmcblk0p2"),
    ('test -n "${bootargs}" || setenv bootargs console=ttyS0', "unset", "console=ttyS0"),
    ("env exists bootargs || env set bootargs 'console=ttyS0'", "unset", "console=ttyS0"),
    ("if env exists bootargs; then echo kept; else setenv bootargs console=ttyS0; fi",
     "unset", "console=ttyS0"),
    ('if test -n "${bootargs}"; then\n  setenv bootargs "${bootargs} quiet"\nfi',
     "always", "${bootargs} quiet"),
    ('if test "${board}" = "x"; then setenv bootargs console=ttyS1; fi', "other",
     "console=ttyS1"),
    ("fdt addr ${fdt_addr}\nfdt get value bootargs /chosen bootargs", "always", None),
    ('setenv bootargs a\nif test -z "${bootargs}"; then setenv bootargs b; fi', "always", "a"),
])
def test_script_settings(script: str, when: str, template: str | None) -> None:
    setting = script_setting(script)
    assert setting is not None and (setting.when, setting.template) == (when, template)


def test_scripts_that_set_nothing() -> None:
    assert script_setting("# setenv bootargs quiet (commented out)\nbootm ${a}") is None
    assert script_setting("echo 'setenv bootargs quiet'; bootm") is None


def test_the_factory_log_names_the_script_and_its_partition() -> None:
    hints = argsource.log_hints(FACTORY_LOG)
    assert (hints.device, hints.script, hints.executed_script) == ("virtio 0:1", "/boot.scr",
                                                                    True)
    assert hints.fit_config == "board" and hints.kernel_cmdline == QEMU_ARGS
    assert argsource.boot_files(QEMU_ENV, hints) == [BootFile("virtio 0:1", "/boot.scr",
                                                              "script")]


def test_factory_board_takes_bootargs_from_the_environment() -> None:
    source = locate(QEMU_ENV, FACTORY_LOG,
                    [BootFile("virtio 0:1", "/boot.scr", "script", FACTORY_SCRIPT)])
    assert source.kind == "bootargs" and source.env_can_change
    assert source.cmdline == QEMU_ARGS
    assert "sets bootargs only when it is unset" in source.describe()


def test_without_bootargs_the_scripts_default_is_used_and_the_environment_wins() -> None:
    env = {k: v for k, v in QEMU_ENV.items() if k != "bootargs"}
    source = locate(env, None, [BootFile("virtio 0:1", "/boot.scr", "script", FACTORY_SCRIPT)])
    assert source.kind == "script" and source.env_can_change and source.cmdline == QEMU_ARGS
    result = plan(SETTINGS, {"quiet": True}, env, facts_from_log(None, env), source=source)
    assert result.commands == [f"setenv bootargs '{QEMU_ARGS} quiet'"]
    assert not result.refused


def test_a_script_that_always_sets_bootargs_refuses_kernel_parameters() -> None:
    script = FACTORY_SCRIPT.replace('if test -z "${bootargs}"; then setenv', "setenv") \
        .replace('"; fi', '"')
    source = locate(QEMU_ENV, None, [BootFile("virtio 0:1", "/boot.scr", "script", script)])
    assert (source.kind, source.env_can_change, source.cmdline) == ("script", False, QEMU_ARGS)
    result = plan(SETTINGS, {"quiet": True, "bootdelay": "0"}, QEMU_ENV,
                  facts_from_log(None, QEMU_ENV), source=source)
    assert set(result.refused) == {"quiet"}
    assert result.commands == ["setenv bootdelay 0"]         # the rest still applies
    assert "the `setenv bootargs` in /boot.scr on virtio 0:1" in result.refused["quiet"]


def test_a_script_that_builds_bootargs_from_variables_is_edited_through_them() -> None:
    script = "setenv bootargs console=${console} root=/dev/vda2 ${optargs}\nbootm"
    env = {**QEMU_ENV, "console": "ttyAMA0,115200"}
    source = locate(env, None, [BootFile("mmc 0:1", "/boot.scr", "script", script)])
    assert source.env_can_change and source.variable == "optargs"
    result = plan(SETTINGS, {"quiet": True}, env, facts_from_log(None, env), source=source)
    assert result.commands == ["setenv optargs quiet"]
    assert result.cmdline == "console=ttyAMA0,115200 root=/dev/vda2 quiet"


def test_extlinux_append_refuses_before_the_run_with_where_and_what_to_do() -> None:
    hints = argsource.log_hints(EXTLINUX_BOOT)
    assert (hints.device, hints.conf, hints.label, hints.append) == (
        "virtio 0:1", "/extlinux/extlinux.conf", "linux", QEMU_ARGS)
    (found,) = argsource.boot_files(QEMU_ENV, hints)
    source = locate(QEMU_ENV, EXTLINUX_BOOT, [BootFile(found.device, found.path, found.kind,
                                                       EXTLINUX_CONF)])
    assert source.kind == "extlinux" and not source.env_can_change
    assert source.refusal("quiet") == (
        "quiet cannot be applied: this board's kernel arguments come from the `append` line "
        "of /extlinux/extlinux.conf on virtio 0:1, which the U-Boot environment cannot change; "
        "use --from-linux to edit it")
    edited = source.edited([Edit("set", "quiet"), Edit("remove", "rootwait")])
    assert edited is not None
    text, line = edited
    assert line == "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro quiet"
    assert text == EXTLINUX_CONF.replace(QEMU_ARGS, line)


def test_extlinux_without_append_or_with_variables_leaves_it_to_the_environment() -> None:
    bare = "\n".join(line for line in EXTLINUX_CONF.splitlines() if "append" not in line)
    source = locate(QEMU_ENV, None, [BootFile("virtio 0:1", "/extlinux/extlinux.conf",
                                              "extlinux", bare)])
    assert source.kind == "bootargs" and "no `append` line for label linux" in source.notes[0]
    with_var = EXTLINUX_CONF.replace(f"append {QEMU_ARGS}", "append ${bootargs} ${extra}")
    source = locate(QEMU_ENV, None, [BootFile("virtio 0:1", "/extlinux/extlinux.conf",
                                              "extlinux", with_var)])
    assert source.kind == "extlinux" and source.env_can_change and source.variable == "extra"


def test_extlinux_label_choice_and_global_append() -> None:
    conf = ("append console=ttyS0\ndefault b\nlabel a\n  kernel /a\n  append root=/dev/a\n"
            "label b\n  kernel /b\nlabel c\n  append root=/dev/c\n")
    assert argsource.extlinux_append(conf) == ("b", "console=ttyS0")
    assert argsource.extlinux_append(conf, "c") == ("c", "root=/dev/c")


def test_the_log_alone_tells_an_extlinux_append_that_differs_from_the_environment() -> None:
    other = EXTLINUX_BOOT.replace(f"append: {QEMU_ARGS}", "append: console=ttyAMA0 root=/dev/vda1")
    files = argsource.boot_files(QEMU_ENV, argsource.log_hints(other))
    source = locate(QEMU_ENV, other, files)
    assert source.kind == "extlinux" and not source.env_can_change and source.confirmed
    same = locate(QEMU_ENV, EXTLINUX_BOOT, argsource.boot_files(
        QEMU_ENV, argsource.log_hints(EXTLINUX_BOOT)))
    assert not same.confirmed        # `append ${bootargs}` would print the same: not refused


def test_a_bootcmd_chain_and_the_device_tree() -> None:
    env = {**QEMU_ENV, "bootcmd": "run mkargs; run distro_bootcmd",
           "mkargs": "setenv bootargs console=ttyAMA0 ${optargs}"}
    assert locate(env).kind == "chain" and locate(env).variable == "optargs"
    bare = {k: v for k, v in QEMU_ENV.items() if k != "bootargs"}
    source = locate(bare, "## Loading kernel from FIT Image at 48000000 ...\n"
                          "   Using 'conf-2' configuration\n"
                          "[    0.000000] Kernel command line: console=ttyS2 root=/dev/sda1\n")
    assert source.kind == "devicetree" and source.env_can_change
    assert source.cmdline == "console=ttyS2 root=/dev/sda1"
    assert "/chosen/bootargs of FIT configuration 'conf-2'" in source.where


def test_firmware_files() -> None:
    rpi = ("[    0.000000] Machine model: Raspberry Pi 4 Model B Rev 1.4\n"
           "[    0.000000] Kernel command line: coherent_pool=1M 8250.nr_uarts=1 "
           "bcm2708_fb.fbwidth=656 console=ttyS0,115200 root=/dev/mmcblk0p2 rootwait\n")
    source = locate({}, rpi)
    assert source.kind == "cmdline_txt" and not source.env_can_change
    assert "/cmdline.txt, which the Raspberry Pi firmware reads" in source.refusal("quiet")
    grub = "GNU GRUB  version 2.06\nBooting `Debian GNU/Linux'\nLoading Linux 6.1.0 ...\n"
    source = locate(QEMU_ENV, grub)
    assert source.kind == "grub" and not source.env_can_change
    text = "console=serial0,115200 root=PARTUUID=1-02 rootwait\n"
    edited = argsource.ArgSource("cmdline_txt", False, text.strip(),
                                 BootFile(None, "/cmdline.txt", "cmdline_txt", text),
                                 detail=text.strip()).edited([Edit("set", "quiet")])
    assert edited == ("console=serial0,115200 root=PARTUUID=1-02 rootwait quiet\n",
                      "console=serial0,115200 root=PARTUUID=1-02 rootwait quiet")


def test_a_bootcmd_that_loads_and_sources_a_script() -> None:
    env = {"bootcmd": "run loadscr", "mmcdev": "1",
           "loadscr": "fatload mmc ${mmcdev}:1 ${loadaddr} uEnv/boot.scr && source ${loadaddr}"}
    assert argsource.boot_files(env, argsource.LogHints()) == [
        BootFile("mmc 1:1", "uEnv/boot.scr", "script")]


def test_probe_finds_the_files_in_distro_boot_order() -> None:
    output = (DATA / "probe-virtio.txt").read_text()
    command = output.splitlines()[0].removeprefix("=> ")
    assert argsource.probe_devices(QEMU_ENV) == ["virtio 0"]
    assert argsource.probe_command(QEMU_ENV, "virtio 0") == command
    assert argsource.parse_probe(output, QEMU_ENV) == [
        BootFile("virtio 0:1", "/extlinux/extlinux.conf", "extlinux"),
        BootFile("virtio 0:1", "/boot.scr", "script")]
