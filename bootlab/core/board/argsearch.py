"""Finding the file a board's kernel arguments come from by what the kernel got.

The environment and the files distro boot reads (`argsource.locate`) do not always give the
kernel its command line: GRUB started from U-Boot's EFI loader reads extlinux.conf or grub.cfg
from a partition U-Boot never scans, a firmware reads cmdline.txt, a `bootcmd` sources a script
by a path of its own. Once the kernel's own line is known (the setup boot's `Kernel command
line:`, or `/proc/cmdline` after login), the board's partitions are searched at the U-Boot
prompt for the boot files real boards use (`search_command`, `parse_search`), each is read, and
the one whose arguments are the kernel's is the source (`best_match`). The rule is the file's
content matching the kernel's line, never a board's file names or text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bootlab.core.board.argsource import (
    ArgSource,
    BootFile,
    extlinux_append,
    script_setting,
)
from bootlab.core.board.cmdline import split_cmdline
from bootlab.core.board.hush import expand

SEARCH_TAG = "bootlab-file"
CANDIDATES = ("extlinux/extlinux.conf", "boot.scr.uimg", "boot.scr", "cmdline.txt",
              "grub/grub.cfg")
"""Boot files searched for under `/` and `/boot/` of every partition."""
_DEVICE_TARGET = re.compile(r"(mmc|virtio|scsi|sata|nvme|usb|ide)(\d+)\Z")
_START = {"virtio": "virtio scan", "scsi": "scsi scan", "sata": "scsi scan",
          "nvme": "nvme scan", "usb": "usb start", "ide": "ide reset"}
"""What distro boot runs before it reads an interface (its `IFACE_init`); mmc needs none."""
LOADER_TOKENS = ("BOOT_IMAGE", "initrd")
"""Parameters loaders add in front of a file's arguments (GRUB's `BOOT_IMAGE=`, EFI stubs'
and systemd-boot's `initrd=`): not part of what the file says."""
_GRUB_LINUX = re.compile(r"(?m)^\s*linux(?:efi|16)?\s+\S+[ \t]*(.*?)[ \t]*$")
_KNOWN_DISK = re.compile(r"Partition Map for|Unknown partition table")
"""What `part list IFACE DEV` prints for a disk U-Boot knows (a missing or unstarted one
prints an error, or nothing at all)."""


def search_devices(env: Mapping[str, str]) -> list[str]:
    """The block devices of `boot_targets` (`virtio 0`, `mmc 1`, `scsi 0`), in boot order."""
    devices = []
    for target in env.get("boot_targets", "").split():
        match = _DEVICE_TARGET.match(target)
        if match is not None:
            iface = "scsi" if match.group(1) == "sata" else match.group(1)
            devices.append(f"{iface} {match.group(2)}")
    return list(dict.fromkeys(devices))


def start_commands(env: Mapping[str, str], device: str) -> list[str]:
    """What makes `device` readable at the prompt, as distro boot does before scanning it
    (`pci enum` where the board enumerates PCI, then the interface's scan)."""
    iface = device.split()[0]
    commands = ["pci enum"] if "boot_pci_enum" in env and iface != "mmc" else []
    return commands + ([_START[iface]] if iface in _START else [])


def unreadable(output: str) -> bool:
    """Whether `part list IFACE DEV`'s answer says U-Boot does not know the disk (not started,
    or absent)."""
    return not _KNOWN_DISK.search(output)


def search_command(device: str) -> str:
    """One U-Boot command listing every `CANDIDATES` file on every partition of `device` as
    `bootlab-file IFACE DEV:PART PATH` lines (a disk without a partition table: partition 1).
    It leaves nothing behind: its list variable is deleted again."""
    names = " ".join(CANDIDATES)
    return (f"part list {device} bl_parts;env exists bl_parts||setenv bl_parts 1;"
            f"for p in ${{bl_parts}};do for d in / /boot/;do for f in {names};do "
            f"if test -e {device}:$p $d$f;then echo {SEARCH_TAG} {device}:$p $d$f;fi;"
            "done;done;done;setenv bl_parts")


def parse_search(output: str) -> list[BootFile]:
    """The files a `search_command` listed, in its order."""
    files = []
    for match in re.finditer(rf"(?m)^{SEARCH_TAG} ([a-z]+ \d+:[0-9a-fA-F]+) ([^\s$]+)\s*$",
                             output):
        path = match.group(2)
        kind = "extlinux" if path.endswith(".conf") else "grub" if path.endswith(".cfg") \
            else "cmdline_txt" if path.endswith(".txt") else "script"
        files.append(BootFile(match.group(1), path, kind))  # type: ignore[arg-type]
    return files


def file_arguments(file: BootFile, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The command lines a boot file can give the kernel: (as written in it, as the kernel
    gets it) for each extlinux label's `append`, each GRUB `linux` line's arguments,
    cmdline.txt, a script's `setenv bootargs` (its variables expanded from `env`)."""
    text = file.text
    if text is None:
        return []
    if file.kind == "extlinux":
        labels = re.findall(r"(?mi)^\s*label\s+(\S+)", text) or [None]
        found = [extlinux_append(text, label)[1] for label in labels]
        written = list(dict.fromkeys(a for a in found if a))
    elif file.kind == "grub":
        written = list(dict.fromkeys(m.group(1) for m in _GRUB_LINUX.finditer(text)
                                     if m.group(1)))
    elif file.kind == "cmdline_txt":
        written = [text.strip()] if text.strip() else []
    else:
        setting = script_setting(text)
        return [] if setting is None or setting.template is None else \
            [(setting.template, expand(setting.template, dict(env)))]
    return [(line, line) for line in written]


def own_tokens(cmdline: str) -> list[str]:
    """A command line's parameters without those a loader adds (`LOADER_TOKENS`)."""
    return [t for t in split_cmdline(cmdline) if t.partition("=")[0] not in LOADER_TOKENS]


def matches(written: str, kernel: str) -> int:
    """How well a file's arguments explain the kernel's line: 2 the same parameters, 1 the
    file's parameters as one run inside the kernel's (a firmware adds its own around them:
    cmdline.txt), 0 no match. A run of one parameter explains nothing."""
    mine, got = own_tokens(written), own_tokens(kernel)
    if not mine:
        return 0
    if mine == got:
        return 2
    if len(mine) >= 2 and any(got[i:i + len(mine)] == mine
                              for i in range(len(got) - len(mine) + 1)):
        return 1
    return 0


def explains(line: str, kernel: str) -> bool:
    """Whether a command line the environment builds explains the kernel's: it `matches`, or
    two thirds of its parameters are in the kernel's line (a variable a `bootcmd` fills in
    at boot time, a `console=` U-Boot's `silent` rewrites, differ; a line from elsewhere
    shares a parameter or two at most)."""
    if matches(line, kernel):
        return True
    mine, got = own_tokens(line), set(own_tokens(kernel))
    return bool(mine) and 3 * sum(token in got for token in mine) >= 2 * len(mine)


@dataclass(frozen=True)
class Match:
    """The file whose arguments are the kernel's, and the arguments as written there."""

    file: BootFile
    written: str
    given: str
    """What the kernel gets from `written` (a script's variables expanded)."""
    exact: bool


def best_match(files: Sequence[BootFile], kernel: str,
               env: Mapping[str, str]) -> Match | None:
    """The file (read, with its text) that gives the kernel `kernel`: an exact match first,
    else the first file whose arguments run inside the kernel's line; in the files' order."""
    scored = [(matches(given, kernel), index, file, written, given)
              for index, file in enumerate(files)
              for written, given in file_arguments(file, env)]
    scored = [entry for entry in scored if entry[0] > 0]
    if not scored:
        return None
    score, _, file, written, given = min(scored, key=lambda entry: (-entry[0], entry[1]))
    return Match(file, written, given, score == 2)


def source_of(match: Match) -> ArgSource:
    """The argument source a content match found: that file, which the environment cannot
    change (the kernel got its arguments, not the environment's)."""
    note = "found by its contents: the kernel got the arguments this file gives" + \
        ("" if match.exact else " (and others a loader or firmware adds)")
    return ArgSource(match.file.kind, False, match.given, match.file, detail=match.written,
                     confirmed=True, notes=(note,))
