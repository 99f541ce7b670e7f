"""A variant is measured only with its settings in force (bootlab/control/planning.py): on the
fake board behind a real pty, first run on its port, every setting a variant names that cannot
be put in force stops the run before its first measured boot (exit 2, the reason and what would
make it work); what is unknown is learned with one setup boot first. The board classes on the
real QEMU boards are tests/test_board_classes.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.fake_board import DEFAULT_ENV, run_cli_on_fake_board
from support.pty_pair import Pty

from bootlab.core.board import argsearch
from bootlab.core.board.argsource import BootFile
from bootlab.core.board.cmdline import Edit
from bootlab.core.board.memdump import script_text, with_script_text
from bootlab.core.board.promptwrite import build_commands, parse_crc32
from bootlab.core.capture.session import load_session
from bootlab.exitcodes import BAD_INPUT


def measured(folder: Path) -> list[Path]:
    """The A/B boots recorded in a folder (the setup boot is not one)."""
    return [p for p in sorted(folder.glob("*.jsonl")) if load_session(p).meta.get("ab")]


def test_a_kernel_line_nothing_on_the_board_explains_refuses_quiet(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The kernel gets its arguments from somewhere the environment is not (a boot script of
    # its own): learned from a setup boot, and quiet is refused, not measured as base.
    script = "console=ttyAMA0,115200 root=/dev/vda3 ro"
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", "quiet:quiet", "--boots", "2",
                                        "--pace-ms", "1", script_bootargs=script)
    err = capsys.readouterr().err
    assert code == BAD_INPUT, err
    assert "no earlier boot on this port: booting the board as it is once" in err
    assert f"the kernel's command line (from its log): {script}" in err
    assert ("variant quiet: Quiet kernel (quiet) cannot be applied: this board's kernel "
            f"arguments come from somewhere bootlab did not find (the kernel got `{script}`; "
            "the U-Boot variable bootargs, passed to the kernel as it is gives "
            f"`{DEFAULT_ENV['bootargs']}`") in err
    assert err.rstrip().endswith("(no boot was measured)")
    assert board.commands.count("boot") == 1 and measured(tmp_path) == []
    assert not any(c.startswith("setenv") for c in board.commands)


def test_a_setting_not_applicable_after_learning_is_refused_with_the_remedy(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # lpj takes its value from the log: unknown on a fresh port, so the setup boot learns
    # it; this board's kernel skips the calibration anyway, so lpj= would save nothing.
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", "lpj", "--boots", "2", "--pace-ms", "1")
    err = capsys.readouterr().err
    assert code == BAD_INPUT, err
    assert "booting the board as it is once to learn it" in err
    line = next(line for line in err.splitlines() if "variant lpj: " in line)
    assert "not applicable" in line and "(--force lpj applies it anyway)" in line
    assert board.commands.count("boot") == 1 and measured(tmp_path) == []


@pytest.mark.parametrize(("spec", "says"), [
    ("bootdelay=0", "No autoboot delay acts before the U-Boot prompt, so a boot started at "
                    "the prompt never shows it: use --persist"),
    ("baudrate", "Console baud rate (baudrate): needs a value: give baudrate=VALUE"),
])
def test_a_setting_that_cannot_act_is_refused_before_any_boot(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str,
        says: str) -> None:
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "ab", "--variant", "base:",
                                        "--variant", f"v:{spec}", "--boots", "2",
                                        "--pace-ms", "1")
    err = capsys.readouterr().err
    assert code == BAD_INPUT, err
    assert f"variant v: {says}" in err, err
    assert board.commands.count("boot") == 0 and measured(tmp_path) == []


def test_boot_refuses_too(pty_pair: Pty, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    code, board = run_cli_on_fake_board(pty_pair, tmp_path, "boot", "--set", "bootdelay=0",
                                        "--pace-ms", "1")
    err = capsys.readouterr().err
    assert code == BAD_INPUT and "use --persist" in err and "(no boot was measured)" in err
    assert board.commands.count("boot") == 0


def test_the_next_run_on_the_port_learns_nothing_again(
        pty_pair: Pty, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("ab", "--variant", "base:", "--variant", "quiet", "--boots", "2", "--pace-ms", "1")
    code, first = run_cli_on_fake_board(pty_pair, tmp_path, *argv, "--name", "one")
    assert code == 0 and first.commands.count("boot") == 5      # setup boot + 4
    capsys.readouterr()
    code, second = run_cli_on_fake_board(pty_pair, tmp_path, *argv, "--name", "two")
    err = capsys.readouterr().err
    assert code == 0, err
    assert second.commands.count("boot") == 4 and "setup boot" not in err


def test_files_are_matched_by_the_arguments_the_kernel_got() -> None:
    kernel = "BOOT_IMAGE=///vmlinuz root=/dev/vda2 ro console=ttyS0,115200 acpi=off"
    conf = ("DEFAULT x\nLABEL old\n  APPEND root=/dev/sda1 ro\nLABEL x\n  LINUX /vmlinuz\n"
            "  APPEND root=/dev/vda2 ro console=ttyS0,115200 acpi=off\n")
    grub = "menuentry 'd' {\n  linux /vmlinuz-6.1 root=/dev/vda2 ro quiet\n}\n"
    files = [BootFile("virtio 0:1", "/boot/grub/grub.cfg", "grub", grub),
             BootFile("virtio 0:1", "/extlinux/extlinux.conf", "extlinux", conf)]
    match = argsearch.best_match(files, kernel, {})
    assert match is not None and match.file.path == "/extlinux/extlinux.conf" and match.exact
    source = argsearch.source_of(match)
    assert not source.env_can_change and source.file_editable
    edited = source.edited([Edit("set", "quiet", None)])
    assert edited is not None and "acpi=off quiet\n" in edited[0]
    assert "APPEND root=/dev/sda1 ro\n" in edited[0]               # the other label as it was
    # a firmware's cmdline.txt: its parameters as one run inside the kernel's line
    txt = BootFile("mmc 0:1", "/cmdline.txt", "cmdline_txt",
                   "console=serial0 root=/dev/mmcblk0p2\n")
    firmware = "coherent_pool=1M 8250.nr_uarts=1 console=serial0 root=/dev/mmcblk0p2"
    found = argsearch.best_match([txt], firmware, {})
    assert found is not None and not found.exact
    assert argsearch.best_match([txt], "console=serial0 root=/dev/sda1", {}) is None
    # an environment line a bootcmd fills in at boot explains the kernel's; another does not
    assert argsearch.explains("console=ttyS0 root=/dev/vda2 rootwait ro", "console=ttyS0 "
                              "root=PARTUUID=1234 rootwait ro")
    assert not argsearch.explains("root=/dev/sdb3 init=/sbin/init rootwait ro", kernel)
    assert argsearch.parse_search("bootlab-file virtio 0:1 /boot/grub/grub.cfg\n") == \
        [BootFile("virtio 0:1", "/boot/grub/grub.cfg", "grub")]


def test_a_script_image_is_rebuilt_around_its_edited_text(tmp_path: Path) -> None:
    header = bytearray(64)
    header[:4] = (0x27051956).to_bytes(4, "big")
    header[30] = 6                                            # a script image
    header[12:16] = (9).to_bytes(4, "big")                    # lengths table + one byte
    header[32:37] = b"test\0"
    text = 'setenv bootargs "root=/dev/vda2 ro"\nboot\n'
    image = with_script_text(bytes(header) + (1).to_bytes(4, "big") + bytes(4) + b"x", text)
    assert image is not None and script_text(image) == text
    assert with_script_text(image, text) == image             # the same text: the same bytes
    assert with_script_text(b"plain text\n", "other\n") == b"other\n"
    assert with_script_text(b"\xd0\x0d\xfe\xed" + bytes(60), "x") is None   # a FIT: not edited


def test_an_edit_at_the_prompt_types_only_the_changed_bytes() -> None:
    old = b"append root=/dev/vda2 ro\n"
    new = b"append root=/dev/vda2 ro quiet\n"
    commands = build_commands(0x1000, 0x11000, old, new)
    assert commands == ["cp.b 1000 11000 18", *(f"mw.b {0x11018 + i:x} {b:02x}"
                                                for i, b in enumerate(b" quiet")),
                        "cp.b 1018 1101e 1"]
    assert build_commands(0x1000, 0x11000, new, old) == ["cp.b 1000 11000 18",
                                                         "cp.b 101e 11018 1"]
    # a script image: its header's CRCs and lengths and the edit typed, the rest copied
    header = bytearray(64)
    header[:4] = (0x27051956).to_bytes(4, "big")
    header[12:16] = (9).to_bytes(4, "big")
    header[30] = 6
    text = "echo " + "x" * 500 + '\nsetenv bootargs "root=/dev/vda2 ro"\nboot\n'
    image = with_script_text(bytes(header) + (1).to_bytes(4, "big") + bytes(4) + b"x", text)
    assert image is not None
    edited = with_script_text(image, text.replace(" ro", " ro quiet"))
    assert edited is not None
    typed = [c for c in build_commands(0, 0x10000, image, edited) if c.startswith("mw.b")]
    assert len(typed) <= 4 * 4 + len(" quiet")
    assert parse_crc32("crc32 for 40200000 ... 4020001f ==> 1a2b3c4d\n") == 0x1A2B3C4D
