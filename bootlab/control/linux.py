"""A Linux shell on the console: log in, run commands and capture their output, reboot."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass

from bootlab.control.board_console import Console, ConsoleTimeout

LOGIN = re.compile(r"(?m)^\S{0,64} ?login: ?$")
PASSWORD = re.compile(r"(?mi)^password: ?$")
SHELL = re.compile(r"(?m)[#$] ?$")


@dataclass
class Credentials:
    """Who to log in as."""

    user: str = "root"
    password: str | None = None


class ShellError(Exception):
    """The shell did not answer as expected."""


def refused(credentials: Credentials) -> str:
    """Why the board is back at its login prompt after a login, with what to change."""
    given = ("no password was given (--password)" if credentials.password is None
             else "the password given (--password) was not accepted")
    return (f"the board refused the login of {credentials.user!r} (back at its login prompt): "
            f"{given}; check --user and --password")


class LinuxShell:
    """A logged-in shell on the console."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def login(self, credentials: Credentials, timeout: float = 60.0,
              at_prompt: bool = False) -> None:
        """Wait for `login:` (unless `at_prompt`: it is showing already), log in (the password
        is recorded redacted), reach a shell."""
        try:
            if not at_prompt:
                self.console.expect([LOGIN], timeout, "login prompt")
            self.console.send(credentials.user + "\n")
            found = self.console.expect([PASSWORD, SHELL, LOGIN], 20, "password or shell prompt")
            if found.pattern is PASSWORD:
                self.console.send((credentials.password or "") + "\n")
                # A refused password is answered after the login program's failure delay.
                found = self.console.expect([SHELL, LOGIN], 20, "shell prompt")
            if found.pattern is LOGIN:
                raise ShellError(refused(credentials))
        except ConsoleTimeout as error:
            raise ShellError(str(error)) from None

    def run(self, command: str, timeout: float = 60.0) -> tuple[int, str]:
        """Run a command; return its exit status and output (recorded in the session too)."""
        status, output, _, _ = self.timed(command, timeout)
        return status, output

    def timed(self, command: str, timeout: float = 60.0) -> tuple[int, str, int, int]:
        """`run`, with the host times (CLOCK_MONOTONIC ns) its line was sent and the read
        that brought its end arrived: what it printed was printed between the two."""
        tag = secrets.token_hex(4)
        done = re.compile(rf"(?m)^__bootlab_{tag}_(\d+)__\r?$")
        self.console.mark()
        sent = time.monotonic_ns()
        # The end marker is printed, not echoed: its pieces are split so the echo cannot match.
        self.console.send(f"{command}; echo __bootlab_{tag}\"_$?__\"\n", paced=False)
        try:
            found = self.console.expect([done], timeout, f"end of {command!r}")
        except ConsoleTimeout as error:
            raise ShellError(str(error)) from None
        lines = found.before.splitlines()
        echoed = [i for i, line in enumerate(lines) if f"__bootlab_{tag}" in line]
        output = "\n".join(lines[echoed[-1] + 1:] if echoed else lines)
        return int(found.match.group(1)), output.strip(), sent, found.t_ns

    def reboot(self) -> None:
        """Reboot at once (`reboot -f`), without waiting for anything."""
        self.console.mark()
        self.console.send("reboot -f\n", paced=False)
