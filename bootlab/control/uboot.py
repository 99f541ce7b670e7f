"""Driving U-Boot (and barebox-like shells): stop autoboot, run commands, read the environment."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bootlab.control.console import Console, ConsoleTimeout

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
        self.console.mark()
        self.console.send(command + "\r")
        try:
            found = self.console.expect(self.options.prompts,
                                        timeout or self.options.command_timeout,
                                        f"prompt after {command!r}")
        except ConsoleTimeout as error:
            raise UBootError(str(error)) from None
        output = found.before
        echo = output.find(command)
        if echo >= 0:
            output = output[echo + len(command):]
        return output.strip("\r\n")

    def printenv(self) -> dict[str, str]:
        """The environment, as `printenv` prints it."""
        env: dict[str, str] = {}
        for line in self.run("printenv").splitlines():
            name, sep, value = line.partition("=")
            if sep and re.fullmatch(r"[\w.:-]+", name):
                env[name] = value
        return env

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
