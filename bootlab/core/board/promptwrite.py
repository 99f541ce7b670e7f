"""Writing a boot file at the U-Boot prompt: the pure parts of the prompt file route.

Where the kernel's arguments come from a file and U-Boot can write that file's file system
(`ext4write` on ext2/ext4, `fatwrite` on FAT), bootlab edits the file at the prompt before each
measured boot, with no Linux login. The file is loaded to the load address, the new content is
built next to it in RAM from the old one (`build_commands`: the unchanged runs copied with
`cp.b`, only the changed bytes typed with `mw.b`, so an edit costs a few commands whatever the
file's size), written back (`write_command`), loaded again and checked with `crc32`
(`parse_crc32`) against the CRC-32 of the bytes meant.
"""

from __future__ import annotations

import difflib
import re
import zlib

WRITERS = {"ext4": "ext4write", "ext2": "ext4write", "fat": "fatwrite", "vfat": "fatwrite"}
"""U-Boot's write command for each file system type `fstype` names."""
SCRATCH = 0x10000
"""Bytes between the loaded file and the copy built from it (a boot file is far smaller:
`uboot.FILE_LIMIT`)."""


def writer(fstype: str) -> str | None:
    """The write command for a file system type as `fstype IFACE DEV:PART` names it (None:
    one U-Boot cannot write)."""
    return WRITERS.get(fstype.lower())


def build_commands(loaded: int, built: int, old: bytes, new: bytes) -> list[str]:
    """Commands that make `new` at address `built` from `old` loaded at `loaded`: each run of
    bytes `new` shares with `old` copied (`cp.b`), only the others typed (`mw.b`), so a script
    image's new CRCs and lengths and the edited words are all that is typed."""
    commands: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, old_at, old_end, new_at, new_end in matcher.get_opcodes():
        if op == "equal":
            commands.append(f"cp.b {loaded + old_at:x} {built + new_at:x} "
                            f"{old_end - old_at:x}")
        else:
            commands += [f"mw.b {built + new_at + index:x} {byte:02x}"
                         for index, byte in enumerate(new[new_at:new_end])]
    return commands


def write_command(write: str, device: str, address: int, path: str, size: int) -> str:
    """`ext4write virtio 0:1 ADDR /extlinux/extlinux.conf SIZE` (ext4write takes an
    absolute path)."""
    return f"{write} {device} {address:x} /{path.lstrip('/')} {size:x}"


def crc32_command(address: int | str, size: int) -> str:
    """`crc32 ADDR SIZE` of bytes in memory."""
    where = address if isinstance(address, str) else f"{address:x}"
    return f"crc32 {where} {size:x}"


def parse_crc32(output: str) -> int | None:
    """The CRC U-Boot's `crc32` printed (`crc32 for 40200000 ... 402000ff ==> 1a2b3c4d`)."""
    found = re.search(r"==>\s*([0-9a-fA-F]{8})\b", output)
    return int(found.group(1), 16) if found else None


def crc32(data: bytes) -> int:
    """The CRC-32 U-Boot's `crc32` gives for `data`."""
    return zlib.crc32(data) & 0xFFFFFFFF


def parse_address(value: str) -> int | None:
    """An environment address (`0x40200000`, or hex without the prefix) as a number."""
    try:
        return int(value, 16)
    except ValueError:
        return None
