"""A fake board behind a real pseudo-terminal: U-Boot and Linux, for fast board-control tests.

U-Boot prints its banner, counts `bootdelay` down (stopped by any key; with 0 it looks once
for a key already typed) and runs `printenv`, `setenv` (hush quoting), `saveenv`, `boot` and
`reset` at `=> `. `boot` prints the bundled QEMU boot's own bootcmd and kernel lines, so every
milestone is found as on the real board; `quiet` in bootargs drops the printk lines, and each
printk line costs `line_s`, as a slow console would. A `rootfstype=` other than ext4 leaves the
root unmounted, as the lab's initramfs does (it says so and goes on to its own login). Linux
offers `board login:`, a shell that answers bootlab's end markers, `cat /proc/cmdline`, a line
written to `/dev/kmsg` (printed with its printk time, as an error-level message is),
`dmesg | gzip -c | base64` (the kernel's lines, quiet or not, on its own clock: seconds since
the boot command) and `reboot -f`.
"""

from __future__ import annotations

import base64
import gzip
import os
import re
import select
import shlex
import threading
import time
from pathlib import Path

from bootlab.cli import main
from bootlab.core.capture.session import load_session
from support.paths import example_sessions
from support.pty_pair import Pty

_TEXT = load_session(example_sessions("default")[0]).data.decode("latin-1")
_KERNEL_START = _TEXT.index("Starting kernel ...\r\n") + len("Starting kernel ...\r\n")
BANNER = _TEXT[:_TEXT.index("Hit any key")]
BOOTCMD = _TEXT[_TEXT.index("fatal: no kernel"):_KERNEL_START]
KERNEL_LINES = _TEXT[_KERNEL_START:_TEXT.index("board login: ")].split("\r\n")
LOGIN = "board login: "
SHELL = "root@board:~# "
PRINTK = re.compile(r"^\[\s*\d+\.\d+\]\s*")
KMSG = re.compile(r"^printf '<\d>(.*) %s\\n' (\S+) > /dev/kmsg$")
DEFAULT_ENV = {
    "arch": "arm",
    "baudrate": "115200",
    "bootargs": "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait",
    "bootcmd": "run distro_bootcmd",
    "bootdelay": "2",
}
READY_AFTER = re.compile(r"\( ready-after (\d+(?:\.\d+)?) \) >/dev/null 2>&1")
"""A `ready:` goal's command the fake shell knows: true once the kernel has run this long."""


def escaped(value: str) -> str:
    """A value as a bare `printenv` prints it (U-Boot 2023.01): a backslash doubled, a newline
    escaped by a backslash (the console sends it as CR LF)."""
    return value.replace("\\", "\\\\").replace("\n", "\\\r\n")


class _Off(Exception):
    """The board was switched off (the test ended)."""


class FakeBoard:
    """U-Boot and Linux on the master side of a pty; bootlab opens `pair.name`."""

    def __init__(self, pair: Pty, second_s: float = 0.1, line_s: float = 0.002,
                 env: dict[str, str] | None = None, kernel_s: float = 0.0,
                 script_bootargs: str | None = None) -> None:
        self.pair = pair
        self.second_s = second_s
        """How long one second of bootdelay lasts."""
        self.line_s = line_s
        self.kernel_s = kernel_s
        """How long the kernel takes to print its first line after the boot command."""
        self.script_bootargs = script_bootargs
        """A boot script's own bootargs: the kernel gets them whatever the environment says
        (a setting sent with setenv is lost behind bootlab's back)."""
        self.cmdline = ""
        """The command line the kernel got in the last boot (`/proc/cmdline`)."""
        self.saved = dict(DEFAULT_ENV if env is None else env)
        """The environment in flash (`saveenv`)."""
        self.env = dict(self.saved)
        self.commands: list[str] = []
        """Command lines typed at the U-Boot prompt, in order."""
        self.shell_commands: list[str] = []
        self.boots = 0
        """Times U-Boot started (power-on, reset, reboot)."""
        self.logins = 0
        """Times Linux printed its login prompt."""
        self.ring: list[str] = []
        """The kernel's log of the last boot (what `dmesg` prints)."""
        self._kernel_t0 = 0.0
        self._input = bytearray()
        self._off = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake board", daemon=True)

    def power_on(self) -> None:
        """Start booting."""
        self._thread.start()

    def power_off(self) -> None:
        """Stop (at the next read or pause)."""
        self._off.set()
        self._thread.join(timeout=5)

    # --- the wire ------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        self.pair.write(text.encode("latin-1"))

    def _sleep(self, seconds: float) -> None:
        if self._off.wait(seconds):
            raise _Off

    def _fill(self, timeout_s: float) -> bool:
        """Read what was typed, waiting up to `timeout_s`; whether anything is waiting."""
        if self._off.is_set():
            raise _Off
        if not self._input:
            ready, _, _ = select.select([self.pair.master], [], [], timeout_s)
            if ready:
                self._input += os.read(self.pair.master, 4096)
        return bool(self._input)

    def _key(self) -> str:
        char = chr(self._input[0])
        del self._input[0]
        return char

    def _read_line(self) -> str:
        """A line typed (echoed as a terminal does), without its CR or LF."""
        line = ""
        while True:
            while not self._fill(0.05):
                pass
            char = self._key()
            if char in "\r\n":
                self._write("\r\n")
                return line
            if char == "\x7f":
                line = line[:-1]
                self._write("\b \b")
            else:
                line += char
                self._write(char)

    # --- U-Boot --------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                self._uboot()
        except (_Off, OSError):
            return

    def _uboot(self) -> None:
        self.boots += 1
        self.env = dict(self.saved)
        self._write(BANNER)
        self._sleep(0.05)
        delay = int(self.env.get("bootdelay", "2"))
        self._write(f"Hit any key to stop autoboot: {max(delay, 0):2d} ")
        if self._countdown(delay):
            self._write("\r\n")
            self._prompt()
        else:
            self._write("\r\n")
            self._boot()

    def _countdown(self, delay: int) -> bool:
        """Whether a key stopped autoboot (consumed, as U-Boot does)."""
        if delay <= 0:
            stopped = self._fill(0)
        else:
            stopped = False
            for left in range(delay - 1, -1, -1):
                stopped = self._fill(self.second_s)
                if stopped:
                    break
                self._write(f"\b\b\b{left:2d} ")
        if stopped:
            self._key()
        return stopped

    def _prompt(self) -> None:
        """Commands at `=> ` until one boots or resets the board."""
        while True:
            self._write("=> ")
            command = self._read_line().strip()
            if not command:
                continue
            self.commands.append(command)
            words = shlex.split(command)
            if words[0] == "printenv":
                size = sum(len(k) + len(v) + 2 for k, v in self.env.items())
                env = sorted(self.env.items())
                self._write("".join(f"{k}={escaped(v)}\r\n" for k, v in env)
                            + f"\r\nEnvironment size: {size}/8188 bytes\r\n")
            elif words[0] == "setenv" and len(words) >= 2:
                if len(words) == 2:
                    self.env.pop(words[1], None)
                else:
                    self.env[words[1]] = " ".join(words[2:])
            elif words[0] == "saveenv":
                self.saved = dict(self.env)
                self._write("Saving Environment to Flash... Erasing... OK\r\nWriting... OK\r\n")
            elif words[0] == "boot":
                self._boot()
                return
            elif words[0] == "reset":
                self._write("resetting ...\r\n")
                return
            else:
                self._write(f"Unknown command '{words[0]}' - try 'help'\r\n")

    # --- Linux ---------------------------------------------------------------------------

    def _uptime(self) -> str:
        """The kernel's printk time now, as it stamps a line."""
        return f"[{time.monotonic() - self._kernel_t0:12.6f}]"

    def _boot(self) -> None:
        self._kernel_t0 = time.monotonic()
        self.ring = []
        self._write(BOOTCMD)
        self._sleep(self.kernel_s)
        bootargs = self.script_bootargs if self.script_bootargs is not None \
            else self.env.get("bootargs", "")
        self.cmdline = bootargs
        quiet = "quiet" in bootargs.split()
        fstype = next((arg.partition("=")[2] for arg in bootargs.split()
                       if arg.startswith("rootfstype=")), "ext4")
        for line in KERNEL_LINES:
            printk = PRINTK.match(line) is not None
            if fstype != "ext4" and "EXT4-fs (vda2): mounted" in line:
                continue
            if fstype != "ext4" and "switching root" in line:
                line = "[initramfs] ERROR: cannot mount root /dev/vda2, staying in initramfs"
            if "Kernel command line:" in line:
                line = line[:line.index("Kernel command line:")] \
                    + f"Kernel command line: {bootargs}"
            if printk:
                self.ring.append(f"{self._uptime()} {PRINTK.sub('', line)}")
            if printk and quiet:
                continue
            self._write(line + "\r\n")
            if printk:
                self._sleep(self.line_s)
        self._write(LOGIN)
        self.logins += 1
        self._linux()

    def _linux(self) -> None:
        """Login, then a shell until `reboot -f`."""
        while not self._read_line().strip():
            self._write(LOGIN)
        self._write(SHELL)
        while True:
            line = self._read_line().strip()
            if line:
                self.shell_commands.append(line)
            if line == "reboot -f":
                self._write("[   99.000000] reboot: Restarting system\r\n")
                return
            command, marker, tag = line.partition("; echo __bootlab_")
            if command == "cat /proc/cmdline":
                self._write(self.cmdline + "\r\n")
            if kmsg := KMSG.match(command):
                self.ring.append(f"{self._uptime()} {kmsg.group(1)} {kmsg.group(2)}")
                self._write(self.ring[-1] + "\r\n")
            if command.startswith("dmesg | grep -F '"):
                wanted = command.split("'")[1]
                self._write("".join(line + "\r\n" for line in self.ring if wanted in line))
            if command == "dmesg | gzip -c | base64":
                packed = gzip.compress(("\n".join(self.ring) + "\n").encode())
                self._write(base64.encodebytes(packed).decode().replace("\n", "\r\n"))
            if command.startswith("read -r up _ < /proc/uptime"):
                self._write(f"uptime {self._uptime().strip('[] ')[:-4]}\r\n")
            status = 1 if command.startswith("command -v systemctl") else 0  # BusyBox's init
            if after := READY_AFTER.fullmatch(command):
                status = int(time.monotonic() - self._kernel_t0 < float(after.group(1)))
            if marker:
                self._write(f"__bootlab_{tag.split(chr(34))[0]}_{status}__\r\n")
            self._write(SHELL)


def run_cli_on_fake_board(pair: Pty, folder: Path, *argv: str,
                          script_bootargs: str | None = None,
                          env: dict[str, str] | None = None) -> tuple[int, FakeBoard]:
    """Run bootlab's command `argv[0]` on the pty (`argv[1:]` after the port); the board powers
    on once bootlab has opened it (as QEMU's console server does when its client connects).
    `script_bootargs`: a boot script on the board sets these bootargs (see `FakeBoard`);
    `env`: the environment in its flash (default `DEFAULT_ENV`)."""
    board = FakeBoard(pair, env=env, script_bootargs=script_bootargs)
    earlier = set(folder.glob("*.jsonl"))
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(
        [*argv[:1], pair.name, *argv[1:], "--sessions", str(folder), "--timeout", "20"])))
    thread.start()
    deadline = time.monotonic() + 10
    while set(folder.glob("*.jsonl")) <= earlier and time.monotonic() < deadline:
        time.sleep(0.01)
    board.power_on()
    thread.join(timeout=120)
    board.power_off()
    assert codes, "bootlab did not finish"
    return codes[0], board
