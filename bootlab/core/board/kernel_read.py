"""The trimmed kernel read: a raw `nand/sf/mmc read` of the kernel shrunk to the image size.

A board that reads its kernel from raw flash often reads a fixed, generous size; the image's
`Data Size` (U-Boot prints it) padded to the flash page, plus a spare page, is all it needs.
`kernel_reads` finds the reads in the scripts bootcmd runs, `kernel_read` picks the kernel's
one and the size it can shrink to (or says why it cannot), `trimmed_script` rewrites it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.hush import run_chain

UIMAGE_HEADER = 64
"""Bytes of a legacy uImage header, which "Data Size" leaves out."""


def trimmed_read_size(image_bytes: int, page: int = 2048, spare_pages: int = 1,
                      header: int = UIMAGE_HEADER) -> int:
    """Bytes to read for an image: header + data rounded up to whole pages, plus spare pages.

    The spare page keeps a kernel rebuilt a little bigger loadable (a short read fails the
    checksum, or worse). 1,246,156 bytes with 2,048-byte pages: 609 pages + 1 = 0x131000.
    """
    pages = -(-(image_bytes + header) // page)
    return (pages + spare_pages) * page


@dataclass(frozen=True)
class KernelRead:
    """A raw flash read in one of bootcmd's scripts."""

    var: str
    """The variable whose script holds it."""
    device: str
    """nand, sf or mmc."""
    command: str
    """The command as written, e.g. "nand read ${loadaddr} 0x280000 0x400000"."""
    address: str
    size: int
    """Bytes it reads."""
    span: tuple[int, int]
    """Where its size (mmc: block count) argument sits in the variable's value."""


_READ = re.compile(r"(?<![\w$.-])(nand|sf|mmc)[ \t]+read(?:\.\w+)?((?:[ \t]+[^\s;]+){3})")
_KERNEL_ADDRESS = re.compile(r"loadaddr|kernel", re.IGNORECASE)


def kernel_reads(env: Mapping[str, str]) -> list[KernelRead]:
    """The `nand read ADDR OFF SIZE`, `sf read ADDR OFF LEN` and `mmc read ADDR BLK CNT`
    commands (size as a number; U-Boot reads it as hex) in the scripts bootcmd runs."""
    env = dict(env)
    reads: list[KernelRead] = []
    for path in run_chain(env):
        var = path[-1]
        script = env[var]
        for match in _READ.finditer(script):
            args = [(m.group(), m.start() + match.start(2), m.end() + match.start(2))
                    for m in re.finditer(r"[^\s;]+", match.group(2))]
            address, _, (count, start, end) = args[0][0], args[1], args[2]
            try:
                number = int(count, 16)
            except ValueError:
                continue  # a variable: its value is not ours to change here
            device = match.group(1)
            size = number * 512 if device == "mmc" else number
            reads.append(KernelRead(var, device, match.group(0).strip(), address, size,
                                    (start, end)))
    return reads


def kernel_read(facts: BoardFacts, page: int,
                 spare_pages: int) -> tuple[KernelRead, int] | str:
    """The kernel's read and the size it can shrink to, or why it cannot."""
    reads = kernel_reads(facts.env)
    if not reads:
        return ("the kernel is not read from raw flash (no nand/sf/mmc read in bootcmd's "
                "scripts); a file load already reads just the file")
    if facts.image_bytes is None:
        return "U-Boot printed no \"Data Size\" for the kernel image, so its size is unknown"
    if facts.image_format == "fit":
        return ("the kernel is inside a FIT image: the read must cover the whole FIT, "
                "not the kernel's Data Size")
    picked = [r for r in reads if facts.loaded_bytes == r.size
              or (facts.loaded_blocks is not None and facts.loaded_blocks * 512 == r.size)]
    picked = picked or [r for r in reads if _KERNEL_ADDRESS.search(r.address)]
    picked = picked or (reads if len(reads) == 1 else [])
    if len({(r.var, r.span) for r in picked}) != 1:
        commands = "; ".join(f"{r.command} ({r.var})" for r in reads)
        return f"several flash reads ({commands}): cannot tell which one loads the kernel"
    read = picked[0]
    size = trimmed_read_size(facts.image_bytes, page, spare_pages)
    if read.device == "mmc":
        size = -(-size // 512) * 512
    if facts.image_bytes + UIMAGE_HEADER > read.size:
        return (f"the image ({facts.image_bytes} bytes) is bigger than the read "
                f"({read.size:#x}): the log does not match bootcmd")
    if size >= read.size:
        return f"the read ({read.size:#x} bytes) is already no bigger than the image needs"
    return read, size


def trimmed_script(env: Mapping[str, str], read: KernelRead, size: int) -> str:
    """The script of `read.var` with the read shrunk to `size` bytes (mmc: blocks)."""
    count = size // 512 if read.device == "mmc" else size
    script = env[read.var]
    return f"{script[:read.span[0]]}{count:#x}{script[read.span[1]:]}"
