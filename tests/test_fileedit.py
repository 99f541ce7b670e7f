"""The pure parts of the `--from-linux` file route (bootlab/core/board/fileedit.py): U-Boot's
partition names as Linux block devices, the diff, the binary-safe write and read commands (run
here through a real shell), the state file and when it may go."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bootlab.control import planning
from bootlab.core.board import fileedit
from bootlab.core.board.abplan import parse_spec
from bootlab.core.board.argsource import ArgSource, BootFile, locate
from bootlab.core.board.cmdline import Edit
from bootlab.core.board.facts import facts_from_log
from bootlab.core.board.fileedit import EditState
from bootlab.core.board.settings import load_settings

PARTITIONS = """major minor  #blocks  name

 254        0     262144 vda
 254        1     131072 vda1
 254        2      65536 vda2
 179        0   15558144 mmcblk0
 179        1     262144 mmcblk0p1
"""


@pytest.mark.parametrize(("uboot", "linux"), [
    ("virtio 0:1", "vda1"), ("virtio 1:2", "vdb2"), ("mmc 0:1", "mmcblk0p1"),
    ("mmc 2:a", "mmcblk2p10"), ("scsi 0:1", "sda1"), ("usb 1:3", "sdb3"),
    ("sata 26:1", "sdaa1"), ("nvme 0:2", "nvme0n1p2"), ("host 0:1", None),
    ("virtio 0", None),
])
def test_uboot_partitions_map_to_linux_block_devices(uboot: str, linux: str | None) -> None:
    assert fileedit.linux_device(uboot) == linux


def test_the_block_device_is_checked_against_proc_partitions() -> None:
    assert fileedit.in_partitions(PARTITIONS, "vda1")
    assert fileedit.in_partitions(PARTITIONS, "mmcblk0p1")
    assert not fileedit.in_partitions(PARTITIONS, "vda3")
    assert not fileedit.in_partitions(PARTITIONS, "name")   # the header is no device


def test_a_partition_mounted_read_write_is_used_where_it_is() -> None:
    mounts = ("/dev/vda2 / ext4 ro,relatime 0 0\n/dev/mmcblk0p1 /boot vfat rw,relatime 0 0\n"
              "/dev/vda1 /mnt vfat ro 0 0\n")
    assert fileedit.mount_point(mounts, "/dev/mmcblk0p1") == "/boot"
    assert fileedit.mount_point(mounts, "/dev/vda1") is None     # read-only: mount our own
    assert fileedit.mount_point(mounts, "/dev/vda3") is None


def test_the_diff_shows_the_changed_line() -> None:
    old = b"label linux\n    append console=ttyAMA0 ro\n"
    new = b"label linux\n    append console=ttyAMA0 ro quiet\n"
    diff = fileedit.unified_diff(old, new, "/extlinux/extlinux.conf")
    assert diff.splitlines()[:2] == ["--- /extlinux/extlinux.conf (original)",
                                     "+++ /extlinux/extlinux.conf (bootlab)"]
    assert "-    append console=ttyAMA0 ro\n+    append console=ttyAMA0 ro quiet\n" in diff
    assert fileedit.unified_diff(old, old, "x") == ""


DATA = bytes(range(256)) * 5 + b"%s %d 'quote' \"dq\" \\ $HOME `x`\n"


@pytest.mark.parametrize("use_base64", [True, False])
def test_the_write_commands_reproduce_any_bytes_in_a_shell(tmp_path: Path,
                                                           use_base64: bool) -> None:
    target = tmp_path / "out file"
    commands = fileedit.write_commands(DATA, str(target), use_base64)
    assert all(len(command) < 2 * fileedit.CHUNK for command in commands)
    assert len(commands) > 3    # chunked
    script = "\n".join(commands).replace(fileedit.STAGING, str(tmp_path / "staging"))
    subprocess.run(["sh", "-e", "-c", script], check=True, env={"HOME": "/nonexistent",
                                                                "PATH": "/usr/bin:/bin"})
    assert target.read_bytes() == DATA
    read = subprocess.run(["sh", "-c", fileedit.read_command(str(target), use_base64)],
                          check=True, capture_output=True, text=True).stdout
    assert fileedit.parse_read(read, use_base64) == DATA


def test_output_that_is_not_what_the_read_command_prints_is_refused() -> None:
    with pytest.raises(ValueError):
        fileedit.parse_read("ZGVm\nroot@board:/# base64 x", True)
    with pytest.raises(ValueError):
        fileedit.parse_read(" 64 65 zz", False)


def test_sha256sum_output_is_read() -> None:
    digest = fileedit.sha256(b"abc")
    assert fileedit.parse_sha256sum(f"{digest}  /tmp/x\n") == digest
    assert fileedit.parse_sha256sum("sha256sum: can't open '/tmp/x'") is None


def test_the_state_file_keeps_the_original_until_the_board_has_it_again(tmp_path: Path) -> None:
    path = fileedit.state_path(tmp_path / "sessions", "socket://127.0.0.1:5555")
    assert path.name == "edit-socket-127-0-0-1-5555.json"
    assert EditState.load(path) is None
    state = EditState.of("socket://127.0.0.1:5555", "virtio 0:1", "/dev/vda1",
                         "/extlinux/extlinux.conf", DATA)
    state.save(path)
    loaded = EditState.load(path)
    assert loaded == state and loaded is not None and loaded.original == DATA
    assert fileedit.restored(loaded, fileedit.sha256(DATA))
    assert not fileedit.restored(loaded, fileedit.sha256(DATA + b"quiet"))
    assert not fileedit.restored(loaded, None)


def test_a_damaged_state_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "edit-x.json"
    EditState.of("p", "virtio 0:1", "/dev/vda1", "/cmdline.txt", b"console=ttyS0").save(path)
    path.write_text(path.read_text().replace(fileedit.sha256(b"console=ttyS0"), "0" * 64))
    with pytest.raises(ValueError, match="hash"):
        EditState.load(path)
    path.write_text("{}")
    with pytest.raises(ValueError, match="not a bootlab edit state"):
        EditState.load(path)


CONF = ("default linux\nlabel linux\n    kernel /Image\n"
        "    append console=ttyAMA0,115200 root=/dev/vda2 ro rootwait\n")


def extlinux_source(device: str | None = "virtio 0:1", text: str | None = CONF) -> ArgSource:
    booted = BootFile(device, "/extlinux/extlinux.conf", "extlinux", text)
    return locate({"bootcmd": "run distro_bootcmd"}, None, [booted])


def test_from_linux_is_suggested_only_where_bootlab_can_edit_the_file() -> None:
    editable = extlinux_source()
    assert editable.file_editable
    assert editable.refusal("quiet").endswith("; use --from-linux to edit it")
    unknown_device = extlinux_source(device=None)
    assert not unknown_device.file_editable
    assert unknown_device.refusal("quiet").endswith("; bootlab cannot edit it from Linux")


def test_with_from_linux_the_file_route_carries_the_refused_parameter() -> None:
    source = extlinux_source()
    settings = load_settings()
    env = {"bootcmd": "run distro_bootcmd"}
    facts = facts_from_log(None, env)
    planned = planning.variant_plan(settings, parse_spec("quiet"), env, facts, (), source)
    assert "quiet" in planned[0].refused and planned[0].file_edits == (Edit("set", "quiet"),)
    the_plan = planning.file_plan(planned, parse_spec("quiet"), source)[0]
    assert the_plan.refused == {} and "quiet" not in the_plan.skipped
    assert the_plan.record["chosen"] == {"quiet": True}
    assert the_plan.cmdline == "console=ttyAMA0,115200 root=/dev/vda2 ro rootwait quiet"
    assert not any("cannot be applied" in warning for warning in the_plan.warnings)
