#!/usr/bin/env python3
"""Record the bundled example sessions from the QEMU board in ../shared/lab (real boots).

For each variant: power the board on with the factory environment, interrupt autoboot, set the
variant's U-Boot variables, `saveenv`, power off; then power on again and let `bootlab record`
capture the cold boot up to the login prompt. Usage (after `.lab` is built, see README):

    .venv/bin/python scripts/record-examples.py [--boots 2] [--out examples]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT.parent / "shared" / "lab"
BOARD = ROOT / ".lab" / "board"
BOOTARGS = "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait"
VARIANTS = {
    "default": {},
    "quiet": {"bootargs": BOOTARGS + " quiet"},
    "bootdelay0": {"bootdelay": "0"},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    """True when something listens on 127.0.0.1:port (read from /proc/net/tcp)."""
    wanted = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(f.split()[1].endswith(wanted) and f.split()[3] == "0A"
                   for f in list(table)[1:])


def power_on(port: int, factory: bool) -> subprocess.Popen[bytes]:
    args = ["bash", str(LAB / "run-board.sh"), "--serial", f"tcp:{port}"]
    if factory:
        args.append("--factory-env")
    env = dict(os.environ, BOARD_OUT=str(BOARD))
    board = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Connecting powers the board on, so wait for the listening socket without connecting.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if listening(port):
            return board
        time.sleep(0.1)
    board.kill()
    raise SystemExit("the board did not open its console port")


def configure(port: int, variables: dict[str, str]) -> None:
    """Factory-reset the environment, apply the variables, saveenv, power off."""
    board = power_on(port, factory=True)
    try:
        import serial

        con = serial.serial_for_url(f"socket://127.0.0.1:{port}", timeout=0.1)
        buf = b""
        deadline = time.monotonic() + 30
        while b"stop autoboot" not in buf:
            if time.monotonic() > deadline:
                raise SystemExit("no autoboot prompt")
            buf += con.read(4096)
        con.write(b" ")

        def command(text: str) -> None:
            con.write(text.encode() + b"\r")
            got = b""
            end = time.monotonic() + 10
            while b"=> " not in (got.split(text.encode(), 1)[-1] if text else got):
                if time.monotonic() > end:
                    raise SystemExit(f"no prompt after {text!r}")
                got += con.read(4096)

        command("")
        for name, value in variables.items():
            command(f"setenv {name} '{value}'")
        command("saveenv")
        con.close()
    finally:
        board.terminate()
        board.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--boots", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "examples")
    args = parser.parse_args()
    for label, variables in VARIANTS.items():
        for run in range(args.boots):
            port = free_port()
            configure(port, variables)
            board = power_on(port, factory=False)
            try:
                setting = [f"--setting={k}={v}" for k, v in variables.items()]
                code = subprocess.call(
                    [sys.executable, "-m", "bootlab", "record", f"socket://127.0.0.1:{port}",
                     "--until", "login", "--timeout", "60", "--label", label,
                     "--board", "qemu-virt-a57", "--sessions", str(args.out), "-q", *setting])
            finally:
                board.terminate()
                board.wait()
            print(f"{label} run {run + 1}: exit {code}", file=sys.stderr)
            if code:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
