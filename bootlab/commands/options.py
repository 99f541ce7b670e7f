"""Command-line options shared by the board commands (kept light: no serial import)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_board_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `boot` and `ab`: the port, the goal, login, probes, rebooting."""
    parser.add_argument("port", help="device path or pyserial URL of the board's console")
    parser.add_argument("--baud", type=int, default=115200)
    parser.add_argument("--board", default="", help="board name stored with the sessions")
    parser.add_argument("--until", default="login", metavar="MILESTONE",
                        help="the boot is measured up to this milestone (default login)")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS")
    parser.add_argument("--persist", action="store_true",
                        help="saveenv and reset, so the measured boot is a plain autoboot "
                             "(needed for settings acting before the prompt: bootdelay)")
    parser.add_argument("--login", action="store_true",
                        help="log in after the goal to run --probe and --run commands")
    parser.add_argument("--user", default="root")
    parser.add_argument("--password", default=None,
                        help="login password (stored redacted in sessions)")
    parser.add_argument("--secret-prompt", default=None, metavar="REGEX",
                        help="input typed at a line matching this is stored redacted "
                             "(default: Password:, passphrase ...:)")
    parser.add_argument("--probe", action="append", default=[], metavar="'NAME: CMD ~ RE'",
                        help="after login run CMD; the regex's named numbers are recorded "
                             "and compared like phases (implies --login)")
    parser.add_argument("--run", action="append", default=[], metavar="COMMAND",
                        help="after login run COMMAND and keep its output (implies --login)")
    parser.add_argument("--reboot", default="auto",
                        choices=["auto", "dtr", "rts", "power", "manual"],
                        help="how to restart the board: auto (U-Boot reset / reboot -f), a "
                             "DTR or RTS pulse, the --power-cmd, or ask the person at the bench")
    parser.add_argument("--power-cmd", default=None, metavar="COMMAND",
                        help="power-cycle command (run without a shell)")
    parser.add_argument("--interrupt", default=" ", metavar="KEY",
                        help="key that stops autoboot (default space)")
    parser.add_argument("--prompt", action="append", default=[], metavar="REGEX",
                        help="the bootloader's shell prompt, if not `=> `, `U-Boot> `, "
                             "`NAME> ` or barebox's")
    parser.add_argument("--autoboot", action="append", default=[], metavar="REGEX",
                        help="the autoboot prompt, if not one of the usual ones")
    parser.add_argument("--boot-cmd", default="boot", metavar="COMMAND",
                        help="what starts the boot at the prompt (default boot; e.g. "
                             "'run bootcmd')")
    parser.add_argument("--from-linux", action="store_true",
                        help="measure reboot-to-userspace: with --persist, boot once, log "
                             "in, then time the boot that `reboot -f` starts")
    parser.add_argument("--pace-ms", type=float, default=10.0,
                        help="delay between typed characters (U-Boot drops fast input)")
    parser.add_argument("--force", action="append", default=[], metavar="SETTING",
                        help="apply a setting even when refused or not applicable")
    parser.add_argument("--facts-from", type=Path, default=None, metavar="SESSION",
                        help="a recorded boot to learn lpj, image size ... from "
                             "(default: the newest boot session of this port)")
