"""The bench engine: bring the board to its bootloader, apply settings, boot, measure.

One measured boot is: reach the bootloader prompt (rebooting the board the way its
`RebootStrategy` says), apply the U-Boot commands of the chosen settings, then either `boot`
at once (volatile settings) or `saveenv` and reset (persistent: the measured boot is then a
plain autoboot, so settings such as bootdelay that act before the prompt show up). The measured
boot's session starts at the moment the boot or reset command is issued; everything before it
(the setup dialogue) is recorded too, in a session of role "setup". After the boot reaches its
goal milestone the engine can log in, run probes and record their figures.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from bootlab.control.console import Console, ConsoleTimeout
from bootlab.control.linux import LOGIN, SHELL, Credentials, LinuxShell
from bootlab.control.uboot import UBoot, UBootError
from bootlab.core.phases import Milestone

STATES = ("unknown", "bootloader", "login", "shell")
"""Where the board is: at the bootloader prompt, a login prompt (showing now), a shell, or not
known."""


@dataclass(frozen=True)
class Probe:
    """A command run after login whose output holds figures (named groups of `pattern`)."""

    name: str
    command: str
    pattern: re.Pattern[str]

    @staticmethod
    def parse(text: str) -> Probe:
        """`NAME: COMMAND ~ REGEX`, e.g. `mem: free ~ Mem:\\s+\\d+\\s+(?P<used_kb>\\d+)`.

        Raises:
            ValueError: malformed, a bad pattern, or a pattern without a named group.
        """
        name, sep, rest = text.partition(":")
        command, tilde, pattern = rest.rpartition(" ~ ")
        if not (sep and tilde and name.strip() and command.strip() and pattern.strip()):
            raise ValueError(f"probe {text!r}: expected 'NAME: COMMAND ~ REGEX'")
        try:
            compiled = re.compile(pattern.strip())
        except re.error as error:
            raise ValueError(f"probe {name}: bad pattern: {error}") from None
        if not compiled.groupindex:
            raise ValueError(f"probe {name}: the pattern needs a named group, e.g. (?P<ms>\\d+)")
        return Probe(name.strip(), command.strip(), compiled)

    def figures(self, output: str) -> dict[str, float]:
        """The named numbers found in the command's output."""
        found = self.pattern.search(output)
        if found is None:
            return {}
        out = {}
        for key, value in found.groupdict().items():
            try:
                out[key] = float(value)
            except (TypeError, ValueError):
                continue
        return out


@dataclass
class RebootStrategy:
    """How to restart the board: `auto` (reset at U-Boot, `reboot -f` at Linux), `dtr`/`rts`
    (pulse a modem line wired to reset), `power` (the user's power-cycle command, run without
    a shell and shown before its first run), or `manual` (ask the person at the bench)."""

    kind: str = "auto"
    command: str | None = None
    pulse_s: float = 0.2
    _shown: bool = field(default=False, repr=False)

    def external(self, console: Console, say: Any) -> None:
        """Restart by a means outside the console's text (power, modem line, person)."""
        if self.kind == "power":
            if not self.command:
                raise ValueError("reboot strategy 'power' needs a command")
            argv = shlex.split(self.command)
            if not self._shown:
                say(f"power-cycle command: {argv}")
                self._shown = True
            subprocess.run(argv, check=True, timeout=60)
        elif self.kind in ("dtr", "rts"):
            set_line = getattr(console.link, "set_line", None)
            if set_line is None:
                raise ValueError(f"reboot strategy {self.kind!r} needs a serial port")
            set_line(self.kind, True)
            time.sleep(self.pulse_s)
            set_line(self.kind, False)
        elif self.kind == "manual":
            say("reset or power-cycle the board now")
        else:
            raise ValueError(f"unknown reboot strategy {self.kind!r}")


@dataclass
class BootResult:
    """One measured boot."""

    path: str
    milestones: list[Milestone]
    reached: bool
    probes: dict[str, dict[str, float]] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)


class Bench:
    """The engine driving one board over one console."""

    def __init__(self, console: Console, reboot: RebootStrategy | None = None,
                 credentials: Credentials | None = None, say: Any = None) -> None:
        self.console = console
        self.uboot = UBoot(console)
        self.shell = LinuxShell(console)
        self.reboot = reboot or RebootStrategy()
        self.credentials = credentials or Credentials()
        self.state = "unknown"
        self.say = say or (lambda text: sys.stderr.write(f"bootlab: {text}\n"))

    def to_bootloader(self, timeout: float = 120.0) -> None:
        """Reach the bootloader prompt from wherever the board is."""
        if self.state == "unknown" and self.reboot.kind == "auto" and self.console.recorder \
                .capture.boots:
            self.find_state()
        if self.state == "bootloader":
            return
        if self.state == "login":
            self.shell.login(self.credentials, at_prompt=True)
            self.state = "shell"
        if self.state == "shell" and self.reboot.kind == "auto":
            self.shell.reboot()
        elif self.reboot.kind != "auto":
            self.reboot.external(self.console, self.say)
        self.uboot.interrupt(timeout)
        self.state = "bootloader"

    def find_state(self) -> None:
        """Press Enter and see which prompt answers: bootloader, login or shell (the state
        stays unknown when none does within 15 s)."""
        self.console.mark()
        self.console.send("\r", paced=False)
        try:
            found = self.console.expect([*self.uboot.options.prompts, LOGIN, SHELL], 15,
                                        "any prompt")
        except ConsoleTimeout:
            return
        if found.pattern is LOGIN:
            self.state = "login"
        elif found.pattern is SHELL:
            self.state = "shell"
        else:
            self.state = "bootloader"

    def restart(self, meta: dict[str, Any]) -> str:
        """Reboot the board now, from wherever it is, the way its strategy says.

        The new boot's session starts when the reboot command is issued. Returns how the board
        was restarted, in words.

        Raises:
            UBootError: the strategy is `auto` but no prompt answered (nothing to type at).
        """
        if self.state == "unknown" and self.reboot.kind == "auto":
            self.find_state()
        if self.reboot.kind == "auto" and self.state == "unknown":
            raise UBootError("no prompt answered Enter (U-Boot, login or shell), so there is "
                             "nothing to type a reboot at; reset the board by hand, or start "
                             "bootlab with --reboot power --power-cmd COMMAND")
        if self.reboot.kind == "auto" and self.state == "login":
            self.shell.login(self.credentials, at_prompt=True)
            self.state = "shell"
        self.console.recorder.start_session(time.monotonic_ns(), role="boot", **meta)
        if self.reboot.kind != "auto":
            self.reboot.external(self.console, self.say)
            how = f"{self.reboot.kind} reboot"
        elif self.state == "bootloader":
            self.uboot.reset()
            how = "reset at the U-Boot prompt"
        else:
            self.shell.reboot()
            how = "reboot -f at the shell"
        self.state = "unknown"
        return how

    def printenv(self) -> dict[str, str]:
        """The bootloader environment (at the prompt)."""
        self.to_bootloader()
        return self.uboot.printenv()

    def apply(self, commands: list[str], persist: bool, baud: int | None = None) -> None:
        """Run the settings' bootloader commands; `saveenv` only when asked to persist.

        A `setenv baudrate N` switches the port to N when U-Boot asks for it.
        """
        self.to_bootloader()
        for command in commands:
            if baud is not None and command.startswith("setenv baudrate "):
                self.uboot.switch_baud(command, baud, self._set_baud)
                continue
            output = self.uboot.run(command)
            if re.search(r"(?i)\b(?:error|unknown command|usage:)", output):
                raise RuntimeError(f"U-Boot refused {command!r}: {output.strip()[:200]}")
        if persist:
            self.uboot.run("saveenv")

    def _set_baud(self, baud: int) -> None:
        set_line = getattr(self.console.link, "set_line", None)
        if set_line is None:
            raise RuntimeError("this link cannot change its baud rate")
        set_line("baudrate", baud)

    def boot(self, meta: dict[str, Any], persist: bool, until: str, timeout: float,
             login: bool = False, probes: tuple[Probe, ...] = (),
             commands: tuple[str, ...] = (), from_linux: bool = False) -> BootResult:
        """Start a measured boot from the bootloader prompt and follow it to `until`.

        Args:
            meta: metadata of the boot's session (label, run, settings ...).
            persist: reset and let the board autoboot (settings were saved), instead of `boot`.
            until: the goal milestone id.
            timeout: give up after this many seconds.
            login: log in after the goal and run `commands` and `probes`.
            from_linux: (with persist) boot once, log in, and measure the boot that
                `reboot -f` starts: reboot-to-userspace.
        """
        self.to_bootloader()
        recorder = self.console.recorder
        if from_linux:
            self.uboot.reset()
            self.shell.login(self.credentials, timeout)
            self.state = "shell"
        t0 = time.monotonic_ns()
        record = recorder.start_session(t0, role="boot", **meta)
        if from_linux:
            self.shell.reboot()
        elif persist:
            self.uboot.reset()
        else:
            self.uboot.boot()
        self.state = "unknown"
        reached = self._wait_for(until, timeout)
        result = BootResult(str(record.path), self._milestones(), reached)
        if reached:
            self.state = "login" if until == "login" else "unknown"
        if reached and login:
            self._after_login(result, commands, probes)
        return result

    def _milestones(self) -> list[Milestone]:
        return [m for b in self.console.recorder.capture.boots for m in b.milestones]

    def _wait_for(self, until: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(m.id == until for m in self._milestones()):
                return True
            self.console.drain(0.05)
        return False

    def _after_login(self, result: BootResult, commands: tuple[str, ...],
                     probes: tuple[Probe, ...]) -> None:
        try:
            self.shell.login(self.credentials)
            self.state = "shell"
            for command in commands:
                _, output = self.shell.run(command)
                result.outputs[command] = output
            for probe in probes:
                _, output = self.shell.run(probe.command)
                result.probes[probe.name] = probe.figures(output)
        except ConsoleTimeout as error:
            self.say(f"after login: {error}")
        writer = self.console.recorder.writer
        writer.meta(time.monotonic_ns() - writer.start_ns, probes=result.probes,
                    outputs=result.outputs)
        self.state = "shell"

    def setup_session(self, **meta: Any) -> None:
        """Record what follows (reboot, interrupt, settings) in a session of role 'setup'."""
        self.console.recorder.start_session(time.monotonic_ns(), role="setup", **meta)
