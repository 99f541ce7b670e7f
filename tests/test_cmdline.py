"""Kernel command line editing and finding where a board's bootcmd builds it."""

from __future__ import annotations

import pytest
from support.qemu_env import QEMU_ARGS, QEMU_ENV

from bootlab.core.board.cmdline import (
    Cmdline,
    Edit,
    Target,
    locate_bootargs,
    render_param,
    split_cmdline,
    with_console_baud,
)


@pytest.mark.parametrize(("text", "tokens"), [
    ("", []),
    ("  quiet   ro ", ["quiet", "ro"]),
    ('foo="a b" bar', ['foo="a b"', "bar"]),
    ('"foo=a b" bar', ['"foo=a b"', "bar"]),
    ("init=/bin/sh -- -x y", ["init=/bin/sh", "--", "-x", "y"]),
    ("a\tb\nc", ["a", "b", "c"]),
])
def test_split_like_the_kernel(text: str, tokens: list[str]) -> None:
    assert split_cmdline(text) == tokens


@pytest.mark.parametrize(("line", "name", "value"), [
    (QEMU_ARGS, "root", "/dev/vda2"),
    (QEMU_ARGS, "rootwait", ""),
    (QEMU_ARGS, "quiet", None),
    ('dyndbg="file x.c +p" quiet', "dyndbg", "file x.c +p"),
    ('"foo=a b"', "foo", "a b"),
    ("loglevel=3 loglevel=7", "loglevel", "7"),          # the kernel takes the last
    ("initcall-debug", "initcall_debug", ""),           # - and _ are the same in names
    ("quiet -- lpj=5", "lpj", None),                    # after -- it is init's
])
def test_get(line: str, name: str, value: str | None) -> None:
    assert Cmdline.parse(line).get(name) == value
    assert Cmdline.parse(line).has(name) == (value is not None)


@pytest.mark.parametrize(("line", "name", "value", "result"), [
    (QEMU_ARGS, "quiet", None, QEMU_ARGS + " quiet"),
    (QEMU_ARGS, "rootfstype", "squashfs",
     "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=squashfs ro rootwait"),
    ("a loglevel=7 b loglevel=4 c", "loglevel", "3", "a loglevel=3 b c"),
    ("a -- x", "lpj", "250000", "a lpj=250000 -- x"),
    ("a", "dyndbg", "file x.c +p", 'a dyndbg="file x.c +p"'),
    ("quiet", "quiet", None, "quiet"),
])
def test_set_keeps_order_and_the_other_tokens(line: str, name: str, value: str | None,
                                              result: str) -> None:
    assert str(Cmdline.parse(line).set(name, value)) == result


@pytest.mark.parametrize(("line", "name", "result"), [
    (QEMU_ARGS + " quiet", "quiet", QEMU_ARGS),
    ("a rootdelay=5 b rootdelay=2", "rootdelay", "a b"),
    ("a initcall-debug b", "initcall_debug", "a b"),
    ("quiet -- quiet", "quiet", "-- quiet"),
    ("a b", "c", "a b"),
])
def test_remove(line: str, name: str, result: str) -> None:
    assert str(Cmdline.parse(line).remove(name)) == result


def test_render_param() -> None:
    assert render_param("quiet", None) == "quiet"
    assert render_param("lpj", "250000") == "lpj=250000"
    assert render_param("x", "") == 'x=""'
    with pytest.raises(ValueError, match="cannot carry"):
        render_param("x", 'a"b')


@pytest.mark.parametrize(("line", "result"), [
    (QEMU_ARGS, QEMU_ARGS.replace("115200", "921600")),
    ("console=ttyS0,115200n8 console=tty0", "console=ttyS0,921600n8 console=tty0"),
    ("console=ttyO0,115200n8r", "console=ttyO0,921600n8r"),
    ("console=ttyS0", "console=ttyS0"),
    ("earlycon=uart8250,mmio32,0xff1a0000,1500000n8 console=ttyS2,1500000",
     "earlycon=uart8250,mmio32,0xff1a0000,921600n8 console=ttyS2,921600"),
    ("earlycon=pl011,0x9000000 quiet", "earlycon=pl011,0x9000000 quiet"),
    ("root=/dev/sda1,115200", "root=/dev/sda1,115200"),
])
def test_console_baud_rewrite(line: str, result: str) -> None:
    assert with_console_baud(line, 921600) == result


def test_qemu_board_takes_bootargs_as_it_is() -> None:
    target = locate_bootargs(QEMU_ENV)
    assert target == Target()
    assert target.var == "bootargs" and target.source is None
    assert target.cmdline(QEMU_ENV) == QEMU_ARGS
    assert "as it is" in target.describe()


def test_bootargs_unset_falls_back_to_the_line_the_kernel_printed() -> None:
    env = {k: v for k, v in QEMU_ENV.items() if k != "bootargs"}
    target = locate_bootargs(env)
    assert target.cmdline(env) == ""
    assert target.cmdline(env, fallback=QEMU_ARGS) == QEMU_ARGS
    applied = target.apply(env, [Edit("set", "quiet")], fallback=QEMU_ARGS)
    assert applied.changes == {"bootargs": QEMU_ARGS + " quiet"}


NAND_ENV = {
    "bootcmd": "run nandboot",
    "nandboot": "run args; nand read ${loadaddr} 0x280000 0x400000; bootm ${loadaddr}",
    "args": "setenv bootargs ${bootargs} ${extra}",
    "bootargs": "console=ttyS0,115200 root=/dev/mtdblock3 quiet",
}


def test_bootargs_located_via_the_bootcmd_chain() -> None:
    target = locate_bootargs(NAND_ENV)
    assert target.chain == ("bootcmd", "nandboot", "args")
    assert target.source == "args" and target.template == "${bootargs} ${extra}"
    assert target.var == target.add_to == "extra"
    assert "extra" in target.describe() and "bootcmd -> nandboot -> args" in target.describe()
    assert target.cmdline(NAND_ENV) == NAND_ENV["bootargs"]
    applied = target.apply(NAND_ENV, [Edit("set", "lpj", "7864320"), Edit("remove", "quiet"),
                                      Edit("baud", baud=921600)])
    assert applied.changes == {"bootargs": "console=ttyS0,921600 root=/dev/mtdblock3",
                               "extra": "lpj=7864320"}
    assert applied.cmdline == "console=ttyS0,921600 root=/dev/mtdblock3 lpj=7864320"
    assert applied.warnings == []


def test_literal_setenv_bootargs_is_rewritten_in_its_script() -> None:
    env = {"bootcmd": "setenv bootargs console=ttyS0,115200 root=/dev/mtdblock2 "
                      "rootfstype=jffs2; nand read 0x80000 0x100000 0x300000; bootm"}
    target = locate_bootargs(env)
    assert target.add_to is None and target.var == "bootcmd" and target.quote == ""
    applied = target.apply(env, [Edit("set", "quiet"), Edit("set", "rootfstype", "ubifs")])
    assert applied.changes == {
        "bootcmd": "setenv bootargs console=ttyS0,115200 root=/dev/mtdblock2 rootfstype=ubifs"
                   " quiet; nand read 0x80000 0x100000 0x300000; bootm"}
    assert applied.cmdline.endswith("rootfstype=ubifs quiet")


TI_ENV = {
    "bootcmd": "run findfdt; for target in ${boot_targets}; do run bootcmd_${target}; done",
    "boot_targets": "mmc0 nand0",
    "bootcmd_mmc0": "run mmcboot",
    "bootcmd_nand0": "run nandboot",
    "mmcboot": "run mmcargs; load mmc 0 ${loadaddr} zImage; bootz ${loadaddr}",
    "mmcargs": 'setenv bootargs "console=${console} ${optargs} root=${mmcroot} '
               'rootfstype=${mmcrootfstype}"',
    "nandboot": "run nandargs; nand read ${loadaddr} kernel; bootz",
    "nandargs": "setenv bootargs console=${console} ${optargs} root=ubi0:rootfs",
    "findfdt": "setenv fdtfile am335x-boneblack.dtb",
    "console": "ttyO0,115200n8",
    "mmcroot": "/dev/mmcblk0p2 ro",
    "mmcrootfstype": "ext4 rootwait",
}


def test_vendor_template_with_optargs_and_variables_as_values() -> None:
    target = locate_bootargs(TI_ENV)
    assert target.source == "mmcargs" and target.quote == '"'
    assert target.chain == ("bootcmd", "bootcmd_mmc0", "mmcboot", "mmcargs")
    assert target.add_to == "optargs" and target.others == ("nandargs",)
    assert target.cmdline(TI_ENV) == ("console=ttyO0,115200n8 root=/dev/mmcblk0p2 ro "
                                      "rootfstype=ext4 rootwait")
    applied = target.apply(TI_ENV, [Edit("set", "quiet"), Edit("baud", baud=921600),
                                    Edit("set", "rootfstype", "ext2")])
    # optargs is unset: it receives additions; console and mmcrootfstype hold whole values.
    assert applied.changes == {"optargs": "quiet", "console": "ttyO0,921600n8",
                               "mmcrootfstype": "ext2 rootwait"}
    assert applied.cmdline == ("console=ttyO0,921600n8 quiet root=/dev/mmcblk0p2 ro "
                               "rootfstype=ext2 rootwait")


def test_removing_a_literal_from_a_quoted_template() -> None:
    env = {**TI_ENV, "mmcargs": 'setenv bootargs "console=${console} debug root=/dev/mmcblk0p2"'}
    applied = locate_bootargs(env).apply(env, [Edit("remove", "debug")])
    assert applied.changes == {
        "mmcargs": 'setenv bootargs "console=${console} root=/dev/mmcblk0p2"'}


def test_what_cannot_be_changed_is_said() -> None:
    env = {"bootcmd": "setenv bootargs console=ttyS0 'root=/dev/sda1' ${more}",
           "more": "quiet"}
    target = locate_bootargs(env)
    assert target.quote is None and target.add_to == "more"
    applied = target.apply(env, [Edit("remove", "quiet"), Edit("remove", "root")])
    assert applied.changes == {"more": ""}
    assert any("root stays on the command line" in w for w in applied.warnings)
    # A rootwait hidden inside a variable that is another parameter's value.
    applied = locate_bootargs(TI_ENV).apply(TI_ENV, [Edit("remove", "rootwait")])
    assert any("rootwait stays" in w for w in applied.warnings)


def test_no_rewrite_of_characters_the_script_cannot_hold() -> None:
    env = {"bootcmd": "setenv bootargs console=ttyS0; bootm"}
    applied = locate_bootargs(env).apply(env, [Edit("set", "x", "a;b")])
    assert applied.changes == {}
    assert any("cannot write ;" in w for w in applied.warnings)


def test_a_value_the_kernel_cannot_take_is_left_out() -> None:
    applied = Target().apply({"bootargs": "ro"}, [Edit("set", "x", 'a"b'), Edit("set", "quiet")])
    assert applied.changes == {"bootargs": "ro quiet"}
    assert any("cannot carry" in w and "left out" in w for w in applied.warnings)
