"""Editing a boot file from the Linux shell (`--from-linux` file route): the pure parts.

A board whose kernel arguments come from a file the U-Boot environment cannot change
(extlinux.conf's `append`, cmdline.txt) is changed by editing that file from a logged-in shell.
This module holds what needs no board: the Linux block device of U-Boot's partition name
(`linux_device`, checked against `/proc/partitions`), the diff shown before a write, the
commands that write bytes through a shell binary-safely (`write_commands`: base64 when the
board has it, else `printf` with octal escapes) and read them back (`read_command`,
`parse_read`), and the local state file (`EditState`) that says an edit is outstanding, so that
a cancelled or crashed run is restored on the next start.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.cmdline import Edit
from bootlab.core.board.memdump import LEGACY_MAGIC, script_text, with_script_text

BACKUP_SUFFIX = ".bootlab-orig"
"""The board keeps the original next to the file under this name while an edit is out."""
NEW_SUFFIX = ".bootlab-new"
"""The new content is written here first, checked, then moved over the file."""
STAGING = "/tmp/bootlab-edit.b64"
"""Where the base64 text is gathered on the board before it is decoded."""
CHUNK = 512
"""Characters per command (base64 text, or octal escapes): well under a tty's line limit."""
_SCSI = ("scsi", "sata", "usb", "ahci", "ide")


def linux_device(uboot_device: str) -> str | None:
    """The Linux block device name of a U-Boot partition (`virtio 0:1` -> `vda1`,
    `mmc 1:2` -> `mmcblk1p2`, `scsi 0:1` -> `sda1`, `nvme 0:1` -> `nvme0n1p1`); U-Boot writes
    the partition in hex. None for an interface with no fixed Linux name.

    Linux numbers its disks in probe order, which is U-Boot's on the usual boards; the name
    is checked against the board's `/proc/partitions` (`in_partitions`) before it is used.
    """
    match = re.fullmatch(r"\s*([a-z]+)\s+(\d+):([0-9a-fA-F]+)\s*", uboot_device)
    if match is None:
        return None
    iface, disk, part = match.group(1), int(match.group(2)), int(match.group(3), 16)
    if iface == "virtio":
        return f"vd{_letters(disk)}{part}"
    if iface == "mmc":
        return f"mmcblk{disk}p{part}"
    if iface == "nvme":
        return f"nvme{disk}n1p{part}"
    if iface in _SCSI:
        return f"sd{_letters(disk)}{part}"
    return None


def _letters(index: int) -> str:
    """Linux's disk letters: 0 -> a, 25 -> z, 26 -> aa."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def in_partitions(text: str, name: str) -> bool:
    """Whether `/proc/partitions` (its text) lists the block device `name`."""
    return any(line.split()[-1:] == [name] for line in text.splitlines()[1:])


def mount_point(mounts: str, device: str) -> str | None:
    """Where `/proc/mounts` (its text) has `device` (`/dev/vda1`) mounted read-write, if
    anywhere."""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0] == device and "rw" in fields[3].split(","):
            return fields[1]
    return None


def edited_file(source: ArgSource, original: bytes, edits: Sequence[Edit]) -> bytes | None:
    """The bytes of `source`'s file, `original` before the edit, with its command line edited
    (`ArgSource.edited`): a text file as text, a legacy script image rebuilt around its
    edited script. None when bootlab cannot find the arguments in it."""
    text = script_text(original)
    if text is None or source.file is None:
        return None
    edited = replace(source, file=replace(source.file, text=text)).edited(edits)
    return None if edited is None else with_script_text(original, edited[0])


def unified_diff(old: bytes, new: bytes, path: str) -> str:
    """The change as a unified diff (`--- PATH (original)` / `+++ PATH (bootlab)`); a script
    image's as the change of its script."""
    texts = [script_text(data) if data[:4] == LEGACY_MAGIC.to_bytes(4, "big") else None
             for data in (old, new)]
    before, after = (text if text is not None else data.decode("utf-8", "replace")
                     for text, data in zip(texts, (old, new), strict=True))
    lines = difflib.unified_diff(before.splitlines(keepends=True),
                                 after.splitlines(keepends=True),
                                 f"{path} (original)", f"{path} (bootlab)")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def edit_note(what: str, old: bytes, new: bytes, path: str, shown: set[tuple[str, str]]) -> str:
    """`what` with the diff the first time this change is made (`shown` remembers it), else
    `what` alone: a run says each of its edits in full once, not at every boot."""
    change = (sha256(old), sha256(new))
    if change in shown:
        return f"{what}: as before"
    shown.add(change)
    return f"{what}:\n" + unified_diff(old, new, path).rstrip("\n")


def sha256(data: bytes) -> str:
    """Hex SHA-256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def parse_sha256sum(output: str) -> str | None:
    """The hash `sha256sum FILE` printed (None: no hash in the output)."""
    match = re.search(r"\b([0-9a-f]{64})\b", output)
    return match.group(1) if match else None


def write_commands(data: bytes, target: str, use_base64: bool) -> list[str]:
    """Shell commands that write `data` to `target` exactly, whatever its bytes: base64 text
    gathered in `STAGING` and decoded (busybox `base64 -d`), else `printf` with every byte
    an octal escape (no `%` or quote can reach the shell), in `CHUNK`-sized commands."""
    quoted = shlex.quote(target)
    if use_base64:
        text = base64.b64encode(data).decode("ascii")
        commands = [f"rm -f {STAGING}"]
        commands += [f"printf '%s\\n' {text[at:at + CHUNK]} >> {STAGING}"
                     for at in range(0, len(text), CHUNK)]
        return [*commands, f"base64 -d {STAGING} > {quoted} && rm -f {STAGING}"]
    step = CHUNK // 4
    commands = [f": > {quoted}"]
    commands += ["printf '" + "".join(f"\\{byte:03o}" for byte in data[at:at + step])
                 + f"' >> {quoted}" for at in range(0, len(data), step)]
    return commands


def read_command(path: str, use_base64: bool) -> str:
    """The command that prints a file binary-safely: base64, else `od` hex bytes."""
    quoted = shlex.quote(path)
    return f"base64 {quoted}" if use_base64 else f"od -An -v -tx1 {quoted}"


def parse_read(output: str, use_base64: bool) -> bytes:
    """The bytes `read_command`'s output stands for.

    Raises:
        ValueError: the output is not what the command prints.
    """
    if use_base64:
        try:
            return base64.b64decode("".join(output.split()), validate=True)
        except binascii.Error as error:
            raise ValueError(f"not base64: {error}") from None
    words = output.split()
    if any(not re.fullmatch(r"[0-9a-f]{2}", word) for word in words):
        raise ValueError("not od -tx1 output")
    return bytes(int(word, 16) for word in words)


@dataclass(frozen=True)
class EditState:
    """An edit that is out on a board: what to put back, and where.

    Saved before the first write and removed only once the board's file verifiably holds
    `original` again, so a run that was cancelled or crashed is restored on the next start.
    """

    port: str
    uboot_device: str
    """`virtio 0:1`."""
    device: str
    """`/dev/vda1`."""
    path: str
    """The file on that partition: `/extlinux/extlinux.conf`."""
    original_b64: str
    sha256: str
    """Of the original bytes."""
    route: str = "linux"
    """How the file was edited, and is put back: "linux" (from a logged-in shell) or
    "prompt" (at the U-Boot prompt, `ext4write`/`fatwrite`)."""

    @classmethod
    def of(cls, port: str, uboot_device: str, device: str, path: str,
           original: bytes, route: str = "linux") -> EditState:
        """The state for `original`, the file's bytes before bootlab edited it."""
        return cls(port, uboot_device, device, path,
                   base64.b64encode(original).decode("ascii"), sha256(original), route)

    @property
    def original(self) -> bytes:
        """The file's bytes before the edit."""
        return base64.b64decode(self.original_b64)

    def save(self, path: Path) -> None:
        """Write the state file (folders made), replacing it atomically."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(self), indent=1) + "\n")
        temporary.replace(path)

    @classmethod
    def load(cls, path: Path) -> EditState | None:
        """The state in `path`; None when there is no such file.

        Raises:
            ValueError: the file is not a state file, or its original does not match its hash.
        """
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: {error}") from None
        try:
            state = cls(**{key: str(raw[key]) for key in cls.__dataclass_fields__
                           if key != "route" or key in raw})
        except (KeyError, TypeError) as error:
            raise ValueError(f"{path}: not a bootlab edit state ({error})") from None
        if sha256(state.original) != state.sha256:
            raise ValueError(f"{path}: the original's hash does not match")
        return state


def state_path(folder: Path, port: str) -> Path:
    """The state file of `port`'s outstanding edit in the sessions folder."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", port).strip("-") or "port"
    return folder / f"edit-{slug}.json"


def restored(state: EditState, board_sha256: str | None) -> bool:
    """Whether the board's file (its hash; None: not read) is the original again, so the state
    file may go."""
    return board_sha256 == state.sha256
