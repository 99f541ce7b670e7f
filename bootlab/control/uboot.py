"""Driving U-Boot (and barebox-like shells): stop autoboot, run commands, read the environment,
read the files a board boots from and find where its kernel arguments come from (the boot file
distro boot reads, or, when the kernel got another line, the file on any partition whose
arguments are the kernel's: `find_source`)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from bootlab.control.board_console import Console, ConsoleTimeout
from bootlab.core.analysis.bootlog import BootLog
from bootlab.core.board import argsearch, argsource
from bootlab.core.board.argsource import ArgSource, BootFile
from bootlab.core.board.cmdline import split_cmdline
from bootlab.core.board.hush import parse_printenv
from bootlab.core.board.memdump import parse_md, script_text

AUTOBOOT = [
    re.compile(r"Hit any key to stop autoboot"),
    re.compile(r"Press SPACE to abort autoboot"),
    re.compile(r"(?i)autoboot in \d+ seconds?"),
    re.compile(r"Hit m for menu or any other key to stop autoboot"),
    re.compile(r"to stop autoboot"),
]
"""The autoboot prompts real bootloaders print (U-Boot, keyed variants, barebox)."""
BANNERS = [re.compile(r"(?m)^U-Boot (?:SPL )?\d{4}\.\d{2}"), re.compile(r"(?m)^barebox \d")]
"""Bootloader banners: from here on, interrupt keys are read."""
PROMPTS = [re.compile(r"(?m)^(?:=>|U-Boot>|[\w.-]{1,24}>{1,2}) +$"),
           re.compile(r"(?m)^barebox@[^:\n]{0,40}:[^\n]{0,40}# +$")]
"""Shell prompts at the end of the output: `=> `, `U-Boot> `, `STM32MP> `, barebox's (with
any interrupt keys echoed after them)."""
FILE_LIMIT = 16 * 1024
"""Largest boot file read through `md.b` (a script or extlinux.conf is far smaller; at 115200
baud 16 KiB of dump takes ~7 s)."""


@dataclass
class UBootOptions:
    """How to talk to this board's bootloader."""

    interrupt: str = " "
    """Key sent to stop autoboot."""
    autoboot: list[re.Pattern[str]] = field(default_factory=lambda: list(AUTOBOOT))
    prompts: list[re.Pattern[str]] = field(default_factory=lambda: list(PROMPTS))
    command_timeout: float = 30.0
    boot_command: str = "boot"
    """What starts the boot at the prompt."""


class UBootError(Exception):
    """The bootloader did not do what was asked; the message says what happened."""


class UBoot:
    """A bootloader shell on a console."""

    def __init__(self, console: Console, options: UBootOptions | None = None) -> None:
        self.console = console
        self.options = options or UBootOptions()

    def interrupt(self, timeout: float = 60.0) -> None:
        """Stop autoboot and reach the prompt.

        Keys are sent from the moment the bootloader's banner shows, every 50 ms, not just at
        the countdown: with `bootdelay=0` U-Boot only looks once for a key already waiting.

        Raises:
            UBootError: no prompt within `timeout`.
        """
        try:
            self.console.expect([*BANNERS, *self.options.autoboot, *self.options.prompts],
                                timeout, "bootloader banner")
        except ConsoleTimeout as error:
            raise UBootError(f"could not stop autoboot: {error}") from None
        deadline = time.monotonic() + min(timeout, 30.0)
        while time.monotonic() < deadline:
            self.console.send(self.options.interrupt, paced=False)
            try:
                self.console.expect(self.options.prompts, 0.05, "bootloader prompt")
            except ConsoleTimeout:
                continue
            self.console.drain(0.1)  # answers to the extra keys
            self.console.mark()
            return
        raise UBootError("the interrupt key was sent for 30 s but no bootloader prompt "
                         "appeared (is this the right interrupt key? --interrupt)")

    def run(self, command: str, timeout: float | None = None) -> str:
        """Type a command, wait for the prompt again, return what it printed.

        Raises:
            UBootError: the prompt did not come back in time.
        """
        return self.timed(command, timeout)[0]

    def timed(self, command: str, timeout: float | None = None) -> tuple[str, int, int]:
        """`run`, with the host times (CLOCK_MONOTONIC ns) its Enter was sent, which starts
        it, and the read that brought its prompt back arrived: what it printed was printed
        between the two.

        Raises:
            UBootError: the prompt did not come back in time.
        """
        self.console.mark()
        self.console.send(command)
        entered = time.monotonic_ns()
        self.console.send("\r", paced=False)  # the answer is read as it comes, not after a pause
        try:
            found = self.console.expect(self.options.prompts,
                                        timeout or self.options.command_timeout,
                                        f"prompt after {command!r}")
        except ConsoleTimeout as error:
            raise UBootError(str(error)) from None
        back = found.t_ns
        output = found.before
        echo = output.find(command)
        if echo >= 0:
            output = output[echo + len(command):]
        return output.strip("\r\n"), entered, back

    def printenv(self) -> dict[str, str]:
        """The environment, as `printenv` prints it (multi-line script variables and
        backslashes unescaped: `hush.parse_printenv`)."""
        return parse_printenv(self.run("printenv"))

    def boot(self, command: str | None = None) -> None:
        """Start booting (no prompt will come back)."""
        self.console.mark()
        self.console.send((command or self.options.boot_command) + "\r")

    def switch_baud(self, command: str, baud: int, set_local: Callable[[int], None]) -> None:
        """Run a `setenv baudrate N`: U-Boot asks for Enter at the new rate; give it that.

        Raises:
            UBootError: U-Boot did not ask, or no prompt came back at the new rate.
        """
        self.console.mark()
        self.console.send(command + "\r")
        try:
            self.console.expect([re.compile(r"Switch baudrate to \d+ bps and press ENTER")], 10,
                                "the baud rate switch request")
            set_local(baud)
            self.console.send("\r", paced=False)
            self.console.expect(self.options.prompts, 10, f"prompt at {baud} baud")
        except ConsoleTimeout as error:
            raise UBootError(str(error)) from None

    def reset(self) -> None:
        """Reset the board from the bootloader."""
        self.boot("reset")

    def read_file(self, device: str, path: str, env: Mapping[str, str],
                  limit: int = FILE_LIMIT) -> bytes | None:
        """A file's bytes, read at the prompt: `load` it to the board's load address, then
        `md.b` it and parse the dump. None when it cannot be loaded or is over `limit`.
        `filesize` and `fileaddr`, which `load` sets, are deleted again if they were unset
        (a tune with --persist would otherwise save them).

        Raises:
            UBootError: the prompt did not come back, or the dump came back short.
        """
        address = next((f"${{{name}}}" for name in ("loadaddr", "scriptaddr", "kernel_addr_r")
                        if name in env), None)
        if address is None:
            return None
        found = re.search(r"(\d+) bytes read", self.run(f"load {device} {address} {path}"))
        size = int(found.group(1)) if found else limit + 1
        dump = self.run(f"md.b {address} {size:x}", timeout=60) if size <= limit else ""
        for name in ("filesize", "fileaddr"):  # what `load` sets: as unset as before
            if name not in env:
                self.run(f"setenv {name}")
        if size > limit:
            return None
        try:
            data = parse_md(dump)[1]
        except ValueError as error:
            raise UBootError(f"reading {path}: {error}") from None
        if len(data) < size:
            raise UBootError(f"reading {path}: md.b showed {len(data)} of {size} bytes")
        return data[:size]


def arg_source(uboot: UBoot, env: Mapping[str, str],
               log: BootLog | str | Sequence[str] | None) -> ArgSource:
    """Where the board's kernel arguments come from (`argsource.locate`), reading the file it
    boots from at the prompt: the one the last boot's log names, or else the first that distro
    boot would find on its devices (`argsource.probe_command`)."""
    files = argsource.boot_files(env, argsource.log_hints(log))
    for device in [] if files else argsource.probe_devices(env):
        files = argsource.parse_probe(uboot.run(argsource.probe_command(env, device)), env)
        if files:
            break
    if files and files[0].device is not None:
        data = uboot.read_file(files[0].device, files[0].path, env)
        files = [replace(files[0], text=None if data is None else script_text(data))]
    return argsource.locate(env, log, files[:1])


def start_device(uboot: UBoot, device: str, env: Mapping[str, str]) -> bool:
    """Make a block device (`virtio 0`, or a partition of it) readable at the prompt: the
    start commands distro boot runs for it (`argsearch.start_commands`), only when U-Boot does
    not know it yet. Returns whether they were run (the board's state then differs from a
    fresh prompt: reset it before a measured boot that is not edited at the prompt too).

    Raises:
        UBootError: the device is not there even after them.
    """
    disk = device.split(":")[0]
    if not argsearch.unreadable(uboot.run(f"part list {disk}")):
        return False
    commands = argsearch.start_commands(env, disk)
    for command in commands:
        uboot.run(command, timeout=60)
    if argsearch.unreadable(uboot.run(f"part list {disk}")):
        raise UBootError(f"U-Boot cannot read {disk}, even after "
                         f"{'; '.join(commands) or 'nothing'}")
    return True


def search_files(uboot: UBoot, env: Mapping[str, str]) -> tuple[list[BootFile], bool]:
    """Every boot file (`argsearch.CANDIDATES`) on every partition of the block devices of
    `boot_targets`, read; and whether a device had to be started for it."""
    files: list[BootFile] = []
    started = False
    for device in argsearch.search_devices(env):
        try:
            started |= start_device(uboot, device, env)
        except UBootError:
            continue  # a target the board does not have (usb0 on a board without USB)
        for found in argsearch.parse_search(uboot.run(argsearch.search_command(device))):
            assert found.device is not None
            data = uboot.read_file(found.device, found.path, env)
            files.append(replace(found, text=None if data is None else script_text(data)))
    return files, started


def find_source(uboot: UBoot, env: Mapping[str, str], log: BootLog | Sequence[str] | None,
                kernel: str | None) -> tuple[ArgSource, bool]:
    """Where the kernel's arguments come from (`arg_source`), checked against the kernel's own
    command line when it is known (`kernel`): when the environment or the file distro boot
    reads does not give that line, the board's files are searched for the one that does
    (`argsearch`), and when none does, the source is "unknown" and says what was compared.
    Returns the source and whether a device had to be started at the prompt."""
    source = arg_source(uboot, env, log)
    if kernel is None or (source.cmdline is not None and _own(source)
                          and argsearch.explains(source.cmdline, kernel)):
        return source, False
    files, started = search_files(uboot, env)
    match = argsearch.best_match(files, kernel, env)
    if match is not None:
        return argsearch.source_of(match), started
    if not _own(source):
        return source, started
    looked = ", ".join(f.where for f in files) or "no boot file on " + \
        (", ".join(argsearch.search_devices(env)) or "no block device of boot_targets")
    given = source.cmdline if source.cmdline is not None else "nothing"
    return ArgSource("unknown", False, kernel, detail=f"the kernel got `{kernel}`; "
                     f"{source.where} gives `{given}`; searched: {looked}"), started


def _own(source: ArgSource) -> bool:
    """Whether the source's command line is its own (the environment's, a file's), not the
    log's line copied (a device tree's, GRUB's or a firmware's file unread)."""
    return source.kind in ("bootargs", "chain", "script", "extlinux") or source.file is not None


def cmdline_from_proc(output: str | None) -> str | None:
    """The kernel command line in `cat /proc/cmdline`'s output (its last line with
    parameters)."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    return " ".join(split_cmdline(lines[-1])) if lines else None
