"""A scripted board on the far side of a pty: U-Boot, a Linux boot, a login with a password.

It powers on when its trigger file appears (the power command the test gives bootlab creates
it), so `bootlab boot --reboot power` drives it as it would a real board.
"""

from __future__ import annotations

import os
import select
import threading
import time
from pathlib import Path

from support.pty_pair import Pty

BANNER = (b"\r\nU-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)\r\n\r\nDRAM:  128 MiB\r\n"
          b"Hit any key to stop autoboot:  3 ")
ENV = b"bootcmd=run distro_bootcmd\r\nbootdelay=3\r\n\r\nEnvironment size: 42/8188 bytes\r\n"
KERNEL = (b"Starting kernel ...\r\n\r\n[    0.000000] Booting Linux on physical CPU 0x0\r\n"
          b"[    0.400000] Freeing unused kernel memory: 1024K\r\n"
          b"[    0.500000] Run /sbin/init as init process\r\n\r\nWelcome\r\nboard login: ")


class PasswordBoard:
    """Runs on a thread until `stop()`; `typed_password` is what reached its password prompt."""

    def __init__(self, pty: Pty, trigger: Path, password: bytes, prompt: bytes = b"Password: ",
                 echo_stars: bool = False, autoboot_s: float | None = None) -> None:
        self.pty = pty
        self.trigger = trigger
        self.password = password
        self.prompt = prompt
        self.echo_stars = echo_stars
        self.autoboot_s = autoboot_s
        """Boot by itself this long after the banner if no key stops it (None: never)."""
        self._banner_at = 0.0
        self.typed_password = b""
        self.logged_in = False
        self._line = bytearray()
        self._state = "off"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._state == "off":
                if self.trigger.exists():
                    self._state = "autoboot"
                    self._banner_at = time.monotonic()
                    self.pty.write(BANNER)
                time.sleep(0.02)
                continue
            if self._state == "autoboot" and self.autoboot_s is not None \
                    and time.monotonic() - self._banner_at >= self.autoboot_s:
                self._state = "login"
                self.pty.write(b"\r\n" + KERNEL)
            ready, _, _ = select.select([self.pty.master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(self.pty.master, 1024)
                except OSError:
                    return
                for byte in data:
                    self._key(bytes([byte]))

    def _key(self, key: bytes) -> None:
        if self._state == "autoboot":
            self._state = "uboot"
            self.pty.write(b"\r\n=> ")
        elif self._state == "password":
            if key in (b"\r", b"\n"):
                self.logged_in = self.typed_password == self.password
                self._state = "shell" if self.logged_in else "login"
                self.pty.write(b"\r\n# " if self.logged_in else b"\r\nLogin incorrect\r\nlogin: ")
            else:
                self.typed_password += key
                if self.echo_stars:
                    self.pty.write(b"*")
        elif key in (b"\r", b"\n"):
            self._enter(self._line.decode().strip())
            self._line.clear()
        else:
            self._line += key
            self.pty.write(key)

    def _enter(self, command: str) -> None:
        if self._state == "uboot":
            if command == "printenv":
                self.pty.write(b"\r\n" + ENV + b"=> ")
            elif command == "boot":
                self._state = "login"
                self.pty.write(b"\r\n" + KERNEL)
            else:
                self.pty.write(b"\r\n=> ")
        elif self._state == "login":
            self._state = "password"
            self.pty.write(b"\r\n" + self.prompt)
        else:
            self.pty.write(b"\r\n# ")
