"""The `--from-linux` file route: edit the file a board takes its kernel arguments from (an
extlinux.conf `append` line, cmdline.txt, a GRUB `linux` line, a boot script) from a logged-in
Linux shell, and put it back.

`LinuxRoute.apply` (at the shell, before the measured `reboot -f`) finds the file's partition
(mounted already, as `/boot` often is, else mounted here: `modprobe vfat` tried first; ext2/4
and FAT alike), reads the file, keeps a backup on the board (`FILE.bootlab-orig`) and the
original in a local state file (`fileedit.EditState`), says the diff, writes the new bytes
binary-safely and checks them by reading back with their sha256. `restore` puts the original
back and removes the state file only once the board's file verifiably matches it
(`control.routes.restore_outstanding` does that for an edit a cancelled or crashed run left).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

from bootlab.control.engine import Bench
from bootlab.control.linux import LinuxShell
from bootlab.core.board import fileedit
from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.cmdline import Edit
from bootlab.core.board.fileedit import EditState

MOUNT = "/tmp/bootlab-boot"
"""Where the file's partition is mounted when it is not mounted already."""


START = "__bootlab_output__"
"""Printed before a command's output, so the command's echo (wrapped at the terminal's width,
which `LinuxShell.run` may not recognise) is never taken for output; typed split in two."""


def run(shell: LinuxShell, command: str) -> tuple[int, str]:
    """`shell.run(command)`: its status and only its output."""
    status, output = shell.run(f'echo {START[:9]}"{START[9:]}"; {command}')
    lines = [line.rstrip("\r") for line in output.splitlines()]
    if START in lines:
        lines = lines[len(lines) - lines[::-1].index(START):]
    return status, "\n".join(lines).strip()


class FileEditError(RuntimeError):
    """The file could not be edited or restored; the message says what the board answered."""


def wanted_bytes(source: ArgSource, original: bytes, edits: Sequence[Edit]) -> bytes:
    """What the file must hold for `edits` (the original for none).

    Raises:
        FileEditError: the kernel's arguments are no longer in the file as they were found.
    """
    if not edits:
        return original
    edited = fileedit.edited_file(source, original, edits)
    if edited is None:
        raise FileEditError(f"bootlab cannot find the kernel arguments in "
                            f"{source.file.path if source.file else 'the file'} any more")
    return edited


class _Mounted:
    """The file's partition, mounted for one edit (unmounted again if bootlab mounted it)."""

    def __init__(self, shell: LinuxShell, uboot_device: str) -> None:
        self.shell = shell
        name = fileedit.linux_device(uboot_device)
        if name is None:
            raise FileEditError(f"{uboot_device}: no known Linux block device for this U-Boot "
                                "interface")
        _, partitions = run(shell, "cat /proc/partitions")
        if not fileedit.in_partitions(partitions, name):
            raise FileEditError(f"{uboot_device} should be /dev/{name} in Linux, but "
                                "/proc/partitions does not list it")
        self.device = f"/dev/{name}"
        _, mounts = run(shell, "cat /proc/mounts")
        self.at = fileedit.mount_point(mounts, self.device)
        self.ours = self.at is None
        if self.at is None:
            self.at = MOUNT
            run(shell, "modprobe -q vfat 2>/dev/null")
            status, output = run(shell, f"mkdir -p {MOUNT} && mount -o rw {self.device} {MOUNT}")
            if status != 0:
                raise FileEditError(f"{self.device} ({uboot_device}) cannot be mounted from "
                                    f"Linux: {output.strip() or 'mount failed'} (is the "
                                    "partition's file system in the kernel or a module?)")
        self.tools = {tool for tool in ("base64", "sha256sum")
                      if run(shell, f"command -v {tool} >/dev/null")[0] == 0}

    def path(self, name: str) -> str:
        """`name` (a path on the partition) under the mount point."""
        return f"{self.at}/{name.lstrip('/')}"

    def read(self, name: str) -> bytes:
        use = "base64" in self.tools
        status, output = run(self.shell, fileedit.read_command(self.path(name), use))
        if status != 0:
            raise FileEditError(f"cannot read {name} on {self.device}: {output.strip()}")
        try:
            return fileedit.parse_read(output, use)
        except ValueError as error:
            raise FileEditError(f"reading {name} on {self.device}: {error}") from None

    def board_sha(self, name: str) -> str | None:
        """The file's hash as the board computes it (None: no sha256sum there)."""
        if "sha256sum" not in self.tools:
            return None
        return fileedit.parse_sha256sum(run(self.shell,
            f"sha256sum {shlex.quote(self.path(name))}")[1])

    def write(self, name: str, data: bytes) -> None:
        """Write `data` to `name` through a new file, checked, then moved over it."""
        new = self.path(name + fileedit.NEW_SUFFIX)
        for command in fileedit.write_commands(data, new, "base64" in self.tools):
            status, output = run(self.shell, command)
            if status != 0:
                raise FileEditError(f"writing {name} on {self.device}: {output.strip()}")
        run(self.shell, "sync")
        self.check(name + fileedit.NEW_SUFFIX, data)
        status, output = run(self.shell, f"mv -f {shlex.quote(new)} "
                                        f"{shlex.quote(self.path(name))} && sync")
        if status != 0:
            raise FileEditError(f"replacing {name} on {self.device}: {output.strip()}")
        self.check(name, data)

    def check(self, name: str, data: bytes) -> None:
        """Read `name` back: its bytes and its on-board hash must be `data`'s."""
        wanted = fileedit.sha256(data)
        back = self.read(name)
        board = self.board_sha(name)
        if fileedit.sha256(back) != wanted or board not in (None, wanted):
            raise FileEditError(f"{name} on {self.device} does not read back as written")

    def close(self) -> None:
        if self.ours:
            run(self.shell, f"sync; umount {MOUNT}")


class LinuxRoute:
    """Edits one board file from the Linux shell for each boot's variant, and restores it."""

    kind = "linux"

    def __init__(self, shell: LinuxShell, source: ArgSource, state_file: Path, port: str,
                 say: Callable[[str], object]) -> None:
        if source.file is None or source.file.device is None:
            raise FileEditError("the file the kernel arguments come from is not known")
        self.shell = shell
        self.source = source
        self.file = source.file
        self.uboot_device = source.file.device
        self.name = source.file.path
        self.state_file = state_file
        self.port = port
        self.say = say
        self.shown: set[tuple[str, str]] = set()
        """The changes whose diff was said (each is said once)."""

    def apply(self, edits: Sequence[Edit]) -> None:
        """At the shell: make the file what `edits` need (the original for none); the first
        time the original is kept on the board and in the state file."""
        mounted = _Mounted(self.shell, self.uboot_device)
        try:
            state = EditState.load(self.state_file)
            current = mounted.read(self.name)
            original = state.original if state is not None else current
            wanted = wanted_bytes(self.source, original, edits)
            if current == wanted:
                if state is not None and wanted == original:
                    self._done(mounted)
                return
            if state is None:
                EditState.of(self.port, self.uboot_device, mounted.device, self.name,
                             original).save(self.state_file)
                backup = shlex.quote(mounted.path(self.name + fileedit.BACKUP_SUFFIX))
                run(self.shell, f"[ -e {backup} ] || cp {shlex.quote(mounted.path(self.name))} "
                               f"{backup}; sync")
            self.say(fileedit.edit_note(f"editing {self.name} on {self.uboot_device} "
                                        f"({mounted.device})", current, wanted, self.name,
                                        self.shown))
            mounted.write(self.name, wanted)
            if wanted == original:
                self._done(mounted)
        finally:
            mounted.close()

    def _done(self, mounted: _Mounted) -> None:
        """The file is the original again: the backup and the state file go."""
        backup = shlex.quote(mounted.path(self.name + fileedit.BACKUP_SUFFIX))
        run(self.shell, f"rm -f {backup}; sync")
        self.state_file.unlink(missing_ok=True)


def restore(shell: LinuxShell, state: EditState, state_file: Path,
            say: Callable[[str], object]) -> None:
    """At the shell: put the original back (if it is not already), check it, then remove the
    board's backup and the state file."""
    mounted = _Mounted(shell, state.uboot_device)
    try:
        current = mounted.read(state.path)
        if not fileedit.restored(state, fileedit.sha256(current)):
            say(f"restoring {state.path} on {state.uboot_device} ({mounted.device}):\n"
                + fileedit.unified_diff(current, state.original, state.path).rstrip("\n"))
            mounted.write(state.path, state.original)
        if not fileedit.restored(state, fileedit.sha256(mounted.read(state.path))):
            raise FileEditError(f"{state.path} on {mounted.device} is not the original after "
                                "the restore")
        backup = shlex.quote(mounted.path(state.path + fileedit.BACKUP_SUFFIX))
        run(shell, f"rm -f {backup}; sync")
        state_file.unlink(missing_ok=True)
    finally:
        mounted.close()


def reach_shell(bench: Bench, timeout: float = 120.0) -> None:
    """Log in to Linux from wherever the board is: at its login prompt or shell after a
    boot, else through U-Boot (`to_bootloader` knows a board that was just powered on) and a
    reset."""
    if bench.state == "running":
        bench.settle()
    if bench.state == "login":
        bench.shell.login(bench.credentials, at_prompt=True)
    elif bench.state != "shell":
        bench.to_bootloader(timeout)
        bench.uboot.reset()
        bench.shell.login(bench.credentials, timeout)
    bench.state = "shell"
