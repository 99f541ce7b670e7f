"""The bench engine: bring the board to its bootloader, apply settings, boot, measure.

One measured boot is: reach the bootloader prompt (rebooting the board the way its
`RebootStrategy` says), apply the U-Boot commands of the chosen settings, then either `boot`
at once (volatile settings) or `saveenv` and reset (persistent: the measured boot is then a
plain autoboot, so settings such as bootdelay that act before the prompt show up). The measured
boot's session starts at the moment the boot or reset command is issued; everything before it
(the setup dialogue) is recorded too, in a session of role "setup". After the boot reaches its
goal (a milestone, or a line pattern that is milestone `goal`: bootlab/core/analysis/goals.py) the
engine can log in, run probes and record their figures.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bootlab.control.board_console import Console, ConsoleTimeout
from bootlab.control.bootstage import in_session, read_bootstage
from bootlab.control.collect import (
    CLOCKSOURCE,
    SYNC_SPAN_S,
    CollectError,
    collect_dmesg,
    collect_systemd,
    collect_tree_bootstage,
    journal_query,
    read_uptime,
)
from bootlab.control.linux import LOGIN, PASSWORD, SHELL, Credentials, LinuxShell, ShellError
from bootlab.control.uboot import UBoot, UBootError
from bootlab.core.analysis.goals import DEFAULT_MILESTONE, Goal, goal_meta, with_goal
from bootlab.core.analysis.journal_goal import LINE as JOURNAL_LINE
from bootlab.core.analysis.journal_goal import SOURCE as JOURNAL_SOURCE
from bootlab.core.analysis.journal_goal import place as place_journal
from bootlab.core.analysis.phases import Milestone
from bootlab.core.analysis.ready import SOURCE as READY_SOURCE
from bootlab.core.analysis.ready import place as place_ready

BoardState = Literal["unknown", "running", "bootloader", "login", "shell"]
"""Where the board is: at the bootloader prompt, a login prompt (showing now), a shell, up after
a boot that reached a goal before login (where exactly is found with Enter), or not known."""
QUIET_S = 3.0
"""Seconds without output after which a boot that showed no login prompt is taken as done."""
ANSWER_S = 15.0
"""Seconds a prompt has to answer the Enter that `find_state` presses."""
READY_POLL_S = 0.05
"""The pause between two runs of a `ready:` goal's command that failed: short, so the goal
is pinned closely, and not none, so the polling does not load the board it measures."""
SILENT_S = 3.0
"""Seconds without any output after the port opens after which the board is taken as already up
(its prompt is then found with Enter) rather than powering on."""


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
    (pulse a modem line wired to reset; its release is stamped as a `reset` event, the boot's
    time zero), `power` (the user's power-cycle command, or their power-off and power-on
    commands, run without a shell and shown before their first run), or `manual` (ask the
    person at the bench)."""

    kind: str = "auto"
    command: str | None = None
    """A power cycle in one command: when in it the power came back is not known, so it is
    not stamped."""
    on_command: str | None = None
    """A command that switches the power on (or presses reset) and returns: its start is
    stamped as a `power` event (`state` on, `ran_ms` its run time, within which the switch
    came), the boot's time zero."""
    off_command: str | None = None
    """With `on_command`: the command switching the power off, `off_s` before it."""
    off_s: float = 2.0
    pulse_s: float = 0.2
    power: Callable[[Callable[..., None]], None] | None = None
    """A power cycle of the bench's own, used by `power` instead of `command` (a labgrid
    place's power resource): called with `stamp(kind, t_ns, **fields)`, which records each
    switch (CLOCK_MONOTONIC `t_ns`) as an event of the current session, so the `on` that
    starts the boot is in it."""
    power_name: str = ""
    """What `power` switches, shown before its first cycle."""
    _shown: bool = field(default=False, repr=False)

    @classmethod
    def of(cls, kind: str | None, cycle: str | None = None, on: str | None = None,
           off: str | None = None, off_s: float = 2.0, default: str = "auto"
           ) -> RebootStrategy:
        """The strategy the command-line options give (`--reboot`, `--power-cmd`,
        `--power-on-cmd`, `--power-off-cmd`, `--power-off`): a power command given without
        `--reboot` is what restarts the board, else `default`.

        Raises:
            ValueError: options that contradict each other, or `power` with no command.
        """
        if cycle and on:
            raise ValueError("give --power-cmd (one power cycle) or --power-on-cmd (and "
                             "--power-off-cmd), not both")
        if off and not on:
            raise ValueError("--power-off-cmd needs --power-on-cmd: the power has to come "
                             "back on")
        if kind is None:
            kind = "power" if on or cycle else default
        if (on or cycle) and kind != "power":
            raise ValueError(f"the power commands are for --reboot power, not {kind}")
        return cls(kind, cycle, on_command=on, off_command=off, off_s=off_s)

    def switch(self, stamp: Callable[..., None], say: Any) -> None:
        """Run the power-off command (if any), wait `off_s`, run the power-on command; each
        switch stamped by `stamp(kind, t_ns, **fields)` as it returns (shown before the first
        run)."""
        assert self.on_command is not None
        if not self._shown:
            say(f"power commands: off {self.off_command and shlex.split(self.off_command)}, "
                f"on {shlex.split(self.on_command)}")
            self._shown = True
        if self.off_command:
            subprocess.run(shlex.split(self.off_command), check=True, timeout=60)
            stamp("power", time.monotonic_ns(), state="off", via=f"`{self.off_command}`")
            time.sleep(self.off_s)
        # Stamped at its start: the switch, and the board's first bytes, may come before the
        # command returns (a relay tool tearing down its USB link); `ran_ms` bounds the switch.
        started = time.monotonic_ns()
        subprocess.run(shlex.split(self.on_command), check=True, timeout=60)
        stamp("power", started, state="on", via=f"`{self.on_command}`",
              ran_ms=round((time.monotonic_ns() - started) / 1e6, 3))

    def external(self, console: Console, say: Any) -> None:
        """Restart by a means outside the console's text (power, modem line, person)."""
        if self.kind == "power" and self.power is not None:
            if not self._shown:
                say(f"power cycle through {self.power_name or 'the place'}")
                self._shown = True
            self.power(console.recorder.stamp)
        elif self.kind == "power" and self.on_command:
            self.switch(console.recorder.stamp, say)
        elif self.kind == "power":
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
            t_ns = time.monotonic_ns()
            set_line(self.kind, False)
            console.recorder.stamp("reset", t_ns, via=f"a {self.kind.upper()} pulse",
                                   ack_ms=round((time.monotonic_ns() - t_ns) / 1e6, 3))
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
    untimed: str | None = None
    """Why a goal asked after login (`ready:`, `journal:`) has no time, in words (None: it
    has one, or it is seen on the console)."""


class Bench:
    """The engine driving one board over one console."""

    def __init__(self, console: Console, reboot: RebootStrategy | None = None,
                 credentials: Credentials | None = None, say: Any = None) -> None:
        self.console = console
        self.uboot = UBoot(console)
        self.shell = LinuxShell(console)
        self.reboot = reboot or RebootStrategy()
        self.credentials = credentials or Credentials()
        self.state: BoardState = "unknown"
        self.say = say or (lambda text: sys.stderr.write(f"bootlab: {text}\n"))

    def settle(self, timeout: float = 90.0) -> None:
        """After a goal before user space the boot goes on: let it reach its login prompt, or
        go quiet for QUIET_S, before anything is typed (Enter or `reboot -f` typed into a
        kernel still booting is lost, and the run would wait for a reboot that never comes).
        A quiet stretch that no prompt answers is a slow boot (a loaded host, a long init
        step): the wait goes on until `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.console.settle([LOGIN], QUIET_S, max(deadline - time.monotonic(), 0.0),
                                        "login prompt")
            if found is not None:
                self.state = "login"
                return
            self.find_state()
            if self.state != "unknown" or time.monotonic() >= deadline:
                return

    def to_bootloader(self, timeout: float = 120.0) -> None:
        """Reach the bootloader prompt from wherever the board is."""
        if self.reboot.kind == "auto" and self.state == "running":
            self.settle()
        elif self.reboot.kind == "auto" and self.state == "unknown" \
                and (self.console.recorder.capture.boots or self._silent(SILENT_S)):
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

    def fresh_prompt(self) -> None:
        """Reset at the bootloader prompt and stop autoboot again: a U-Boot in the state a
        boot starts from (after commands that started devices, say)."""
        self.to_bootloader()
        self.uboot.reset()
        self.uboot.interrupt()
        self.state = "bootloader"

    def _silent(self, seconds: float) -> bool:
        """Whether the board printed nothing for `seconds`: it was already up when the port
        was opened (a QEMU board connected to again sits at its login prompt), so waiting for
        a power-on banner would be in vain."""
        deadline = time.monotonic() + seconds
        while not self.console.text().strip() and time.monotonic() < deadline:
            self.console.drain(0.1)
        return not self.console.text().strip()

    def find_state(self) -> None:
        """Press Enter and see which prompt answers: bootloader, login or shell (the state is
        unknown when none does within ANSWER_S).

        A password prompt answering (a login left half-done, by bootlab or a person) takes one
        more Enter: an empty password, refused after the login program's failure delay, brings
        the login prompt back. Nothing else is typed there."""
        self.console.mark()
        self.console.send("\r", paced=False)
        try:
            found = self.console.expect_prompt(
                [*self.uboot.options.prompts, LOGIN, SHELL, PASSWORD], ANSWER_S, "any prompt")
            if found.pattern is PASSWORD:
                self.console.mark()
                self.console.send("\r", paced=False)
                found = self.console.expect_prompt([LOGIN], ANSWER_S, "login prompt")
        except ConsoleTimeout:
            self.state = "unknown"
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
        if self.state == "running" and self.reboot.kind == "auto":
            self.settle()
        elif self.state == "unknown" and self.reboot.kind == "auto":
            self.find_state()
        if self.reboot.kind == "auto" and self.state == "unknown":
            raise UBootError("no prompt answered Enter (U-Boot, login or shell), so there is "
                             "nothing to type a reboot at; reset the board by hand, or start "
                             "bootlab with --reboot power --power-cmd COMMAND")
        if self.reboot.kind == "auto" and self.state == "login":
            self.shell.login(self.credentials, at_prompt=True)
            self.state = "shell"
        by = {} if self.reboot.kind == "auto" else {"restarted_by": self.reboot.kind}
        self.console.recorder.start_session(time.monotonic_ns(), role="boot", **meta, **by)
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

    def boot(self, meta: dict[str, Any], persist: bool, goal: Goal, timeout: float,
             login: bool = False, probes: tuple[Probe, ...] = (),
             commands: tuple[str, ...] = (), from_linux: bool = False,
             at_shell: Callable[[], None] | None = None, collect: bool = False) -> BootResult:
        """Start a measured boot from the bootloader prompt and follow it to its goal.

        Args:
            meta: metadata of the boot's session (label, run, settings ...).
            persist: reset and let the board autoboot (settings were saved), instead of `boot`.
            goal: what the boot is measured to (stored with its session; a pattern goal's
                milestone joins the recorder's profile).
            timeout: give up after this many seconds.
            login: log in after the goal and run `commands` and `probes`.
            collect: log in after the goal and read what the board knows of the boot (its
                dmesg, placed on the session's clock by a sync line: `control.collect`),
                stored in the session as a `collected` event; and, when `boot` is typed at
                the prompt, U-Boot's bootstage read there first (`control.bootstage`).
            from_linux: (with persist) boot once, log in, and measure the boot that
                `reboot -f` starts: reboot-to-userspace.
            at_shell: (with from_linux) run at the shell before that reboot, in the setup
                session: the file route edits the board's boot file there.
        """
        self.to_bootloader()
        recorder = self.console.recorder
        if from_linux:
            self.uboot.reset()
            self.shell.login(self.credentials, timeout)
            self.state = "shell"
            if at_shell is not None:
                at_shell()
        stages = self._bootstage() if collect and not (from_linux or persist) else None
        recorder.profile = with_goal(recorder.profile, goal)
        t0 = time.monotonic_ns()
        record = recorder.start_session(t0, role="boot", **{**meta, "goal": goal_meta(goal)})
        if stages is not None:
            recorder.writer.event("collected", 0,
                                  **{**stages, "timer": in_session(stages["timer"], t0)})
        if from_linux:
            self.shell.reboot()
        elif persist:
            self.uboot.reset()
        else:
            self.uboot.boot()
        self.state = "unknown"
        deadline = time.monotonic() + timeout
        reached = self._wait_for(Goal((DEFAULT_MILESTONE,)) if goal.after_login else goal,
                                 timeout)
        result = BootResult(str(record.path), self._milestones(), reached is not None)
        if reached is not None:
            self.state = "login" if reached.id == "login" else "running"
        if reached is not None and goal.after_login:
            found = [place_ready(event) if event["source"] == READY_SOURCE else
                     place_journal(event) for event in self._ask_after_login(goal, deadline)]
            untimed = [said for asked, said in found if asked is None]
            result.untimed = "; ".join(untimed) or None
            result.reached = not untimed
            placed = sorted((asked for asked, _ in found if asked is not None),
                            key=lambda m: m.host_s or 0.0)
            result.milestones += [replace(asked, boot=reached.boot) for asked in placed]
        if reached is not None and (login or collect):
            self._after_login(result, commands, probes, collect)
        return result

    def _milestones(self) -> list[Milestone]:
        return [m for b in self.console.recorder.capture.boots for m in b.milestones]

    def _wait_for(self, goal: Goal, timeout: float) -> Milestone | None:
        """The goal's milestone once the boot reaches it; None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reached = goal.reached(self._milestones())
            if reached is not None:
                return reached
            self.console.drain(0.05)
        return None

    def _ask_after_login(self, goal: Goal, deadline: float) -> list[dict[str, Any]]:
        """Log in and ask each of the goal's questions for the shell together, round after
        round (`READY_POLL_S` between), until each is answered or `deadline` passes.

        A `ready:` command is run, each run bracketed by when its line was sent and its answer
        came back; its first run, last failure and first success are kept (`analysis.ready`
        places the goal between the last two). A `journal:` pattern is looked for in this
        boot's journal, with the board's monotonic clock read before and after (at least
        `SYNC_SPAN_S` apart) and its clocksource (`analysis.journal_goal` places the message by
        its journal time). One `collected` event per question (commands first), written and
        returned."""
        writer = self.console.recorder.writer
        readies = {c: {"source": READY_SOURCE, "command": c, "polls": 0} for c in goal.readies}
        journals = {p: {"source": JOURNAL_SOURCE, "pattern": p, "polls": 0}
                    for p in goal.journals}
        try:
            self.shell.login(self.credentials, at_prompt=True)
            self.state = "shell"
            first = read_uptime(self.shell) if journals else None
            if journals:
                _, clocksource = self.shell.run(CLOCKSOURCE)
                for event in journals.values():
                    event["clocksource"] = clocksource

            def unanswered() -> list[dict[str, Any]]:
                return [*(e for e in readies.values() if "ok" not in e),
                        *(e for e in journals.values() if "line" not in e and "why" not in e)]

            while time.monotonic() < deadline and (asking := unanswered()):
                for event in asking:
                    (self._run_ready if "command" in event else self._look_in_journal)(
                        event, deadline)
                if unanswered():
                    time.sleep(READY_POLL_S)
            if journals:
                if first is not None:
                    time.sleep(max(0.0, SYNC_SPAN_S
                                   - (time.monotonic_ns() - first["back"]) / 1e9))
                reads = [read for read in (first, read_uptime(self.shell)) if read is not None]
                for event in journals.values():
                    event["uptime"] = in_session(reads, writer.start_ns)
        except (ConsoleTimeout, ShellError) as error:
            self.say(f"after login: {error}")
        events = [*readies.values(), *journals.values()]
        for event in events:
            writer.event("collected", time.monotonic_ns() - writer.start_ns, **event)
        writer.flush(sync=True)
        return events

    def _run_ready(self, event: dict[str, Any], deadline: float) -> None:
        """Run a `ready:` command once, bracketed, keeping the run in `event` as its first,
        its last failure or its success."""
        start_ns = self.console.recorder.writer.start_ns
        status, _, sent, back = self.shell.timed(
            f"( {event['command']} ) >/dev/null 2>&1", max(deadline - time.monotonic(), 1.0))
        event["polls"] += 1
        run = {"sent": sent - start_ns, "back": back - start_ns, "status": status}
        event.setdefault("first", run)
        event["ok" if status == 0 else "failed"] = run

    def _look_in_journal(self, event: dict[str, Any], deadline: float) -> None:
        """Ask this boot's journal once for its first message matching the `journal:`
        pattern: the message's line, or why the journal cannot answer, goes into `event`."""
        status, output = self.shell.run(journal_query(event["pattern"]),
                                        max(deadline - time.monotonic(), 1.0))
        event["polls"] += 1
        first_line = output.strip().splitlines()[0] if output.strip() else ""
        if JOURNAL_LINE.match(first_line):
            event["line"] = first_line
        elif first_line or status != 0:  # journalctl missing, a pattern it refused
            event["why"] = f"`journalctl` answered {first_line[:200]!r} (exit {status})"

    def _after_login(self, result: BootResult, commands: tuple[str, ...],
                     probes: tuple[Probe, ...], collect: bool = False) -> None:
        writer = self.console.recorder.writer
        try:
            if self.state != "shell":
                self.shell.login(self.credentials)
            self.state = "shell"
            for command in commands:
                _, output = self.shell.run(command)
                result.outputs[command] = output
            for probe in probes:
                _, output = self.shell.run(probe.command)
                result.probes[probe.name] = probe.figures(output)
            if collect:
                self._collect()
        except ConsoleTimeout as error:
            self.say(f"after login: {error}")
        writer.meta(time.monotonic_ns() - writer.start_ns, probes=result.probes,
                    outputs=result.outputs)
        self.state = "shell"

    def _bootstage(self) -> dict[str, Any] | None:
        """At the prompt of the power cycle `boot` will continue: U-Boot's own stages, to keep
        with the boot (`control.bootstage`); None, said, when this U-Boot has none."""
        found = read_bootstage(self.uboot)
        if isinstance(found, str):
            self.say(f"collect: {found}")
            return None
        return found

    def _collect(self) -> None:
        """Read the board's dmesg into the session; a failure is said, the boot kept."""
        writer = self.console.recorder.writer
        try:
            first = read_uptime(self.shell)
            fields = collect_dmesg(self.shell)
        except (CollectError, ShellError) as error:
            self.say(f"collect: {error}; the boot is kept without it")
            return
        writer.event("collected", time.monotonic_ns() - writer.start_ns, **fields)
        try:  # after dmesg, seconds after the first read of the board's clock
            units = collect_systemd(self.shell, first)
        except (CollectError, ShellError) as error:
            self.say(f"collect: {error}; the boot is kept without systemd's units")
            return
        if units is not None:
            writer.event("collected", time.monotonic_ns() - writer.start_ns,
                         **{**units, "uptime": in_session(units["uptime"], writer.start_ns)})
        try:
            tree = collect_tree_bootstage(self.shell)
        except (CollectError, ShellError) as error:
            self.say(f"collect: {error}; the boot is kept without U-Boot's records")
            return
        if tree is not None:
            writer.event("collected", time.monotonic_ns() - writer.start_ns, **tree)

    def run_after(self, result: BootResult, command: str) -> str | None:
        """Run one more command after a boot reached its goal (logging in at its login prompt),
        kept with the boot's outputs and in its session: what the log could not tell
        (`/proc/cmdline`). None when the board shows neither a login prompt nor a shell, or
        the login is refused."""
        if self.state not in ("login", "shell"):
            return None
        try:
            self._after_login(result, (command,), ())
        except ShellError as error:
            self.say(f"after login: {error}")
            return None
        return result.outputs.get(command)

    def setup_session(self, **meta: Any) -> None:
        """Record what follows (reboot, interrupt, settings) in a session of role 'setup'."""
        self.console.recorder.start_session(time.monotonic_ns(), role="setup", **meta)
