"""Command-line options shared by the board commands (kept light: no serial import)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_board_options(parser: argparse.ArgumentParser, several: bool = False) -> None:
    """Options shared by `boot` and `ab`: the port, the goal, login, probes, rebooting;
    `several`: `--place` repeatable, and `--place-tag` (`ab` spreads over several boards)."""
    add_port_options(parser, "device path or pyserial URL of the board's console", several)
    parser.add_argument("--board", default="", help="board name stored with the sessions")
    add_goal_options(parser)
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
    parser.add_argument("--reboot", default=None,
                        choices=["auto", "dtr", "rts", "power", "manual"],
                        help="how to restart the board: auto (U-Boot reset / reboot -f), a "
                             "DTR or RTS pulse, the --power-cmd (or a --place's power), or "
                             "ask the person at the bench (default: power for a place with "
                             "a power resource, else auto)")
    parser.add_argument("--power-cmd", default=None, metavar="COMMAND",
                        help="power-cycle command (run without a shell; with --place: "
                             "the place's power resource)")
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
                             "in, then time the boot that `reboot -f` starts; a board whose "
                             "kernel arguments come from a file (extlinux.conf, cmdline.txt) "
                             "gets that file edited there, with a backup, the diff shown, and "
                             "the original restored at the end")
    parser.add_argument("--restore", action="store_true",
                        help="only put back the boot file an interrupted --from-linux run "
                             "left edited on this port (logging in to Linux), then exit; "
                             "every run does this first anyway")
    parser.add_argument("--pace-ms", type=float, default=10.0,
                        help="delay between typed characters (U-Boot drops fast input)")
    parser.add_argument("--force", action="append", default=[], metavar="SETTING",
                        help="apply a setting even when refused or not applicable")
    parser.add_argument("--facts-from", type=Path, default=None, metavar="SESSION",
                        help="a recorded boot to learn lpj, image size ... from "
                             "(default: the newest boot session of this port)")


def add_goal_options(parser: argparse.ArgumentParser) -> None:
    """The boot's goal, shared by `boot`, `ab` and the app: a milestone or a line pattern."""
    goal = parser.add_mutually_exclusive_group()
    goal.add_argument("--until", default=None, metavar="MILESTONE",
                      help="the boot is measured up to this milestone id of the profile "
                           "(default login)")
    goal.add_argument("--pattern", default=None, metavar="REGEX",
                      help="the boot is measured up to the first line matching this (an "
                           "application's 'display on', a shell prompt); it is stored as "
                           "milestone `goal`")


def add_port_options(parser: argparse.ArgumentParser, port_help: str,
                     several: bool = False) -> None:
    """The port, or a labgrid place instead (`record`, `boot`, `ab`, `tune`, the app);
    `several`: places as a list (`--place` repeatable, `--place-tag`), for `ab`."""
    parser.add_argument("port", nargs="?", default=None,
                        help=f"{port_help} (or give --place)")
    parser.add_argument("--baud", type=int, default=None,
                        help="line speed (default 115200; for a place its console's speed)")
    place = parser.add_argument_group("labgrid places instead of ports" if several
                                      else "a labgrid place instead of a port")
    what = ("acquire this labgrid place, read its exported console, power the board through "
            "its power resource, release it at the end")
    if several:
        place.add_argument("--place", action="append", default=[], metavar="NAME",
                           help=f"{what}; repeat it for several identical boards: all are "
                                "acquired before any boot, the boots spread over them in "
                                "parallel (as --also-port), each board named place:NAME "
                                "(default: LG_PLACE when no port is given)")
        place.add_argument("--place-tag", action="append", default=[], metavar="KEY=VALUE",
                           help="also every free place carrying this tag (labgrid-client "
                                "set-tags; repeat it: places carrying all of them); places "
                                "held by others are left out")
    else:
        place.add_argument("--place", default=None, metavar="NAME",
                           help=f"{what} (default: LG_PLACE when no port is given)")
    place.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                       help="the labgrid coordinator (default: LG_COORDINATOR, else "
                            "127.0.0.1:20408)")
    place.add_argument("--release-stale", action="store_true",
                       help="if you already hold the place on this host (a run that "
                            "crashed), release it first instead of stopping")
    place.add_argument("--power-off", type=float, default=2.0, metavar="SECONDS",
                       help="how long a power cycle keeps the place's board off (default 2)")


def add_line_options(parser: argparse.ArgumentParser) -> None:
    """The serial line's framing and mapping, as picocom and tio name them (`SerialLine`,
    `linemap`): for `bootlab PORT` and `record`."""
    line = parser.add_argument_group("the serial line (as picocom and tio set it)")
    line.add_argument("--data-bits", type=int, choices=(5, 6, 7, 8), default=8,
                      help="data bits (default 8)")
    line.add_argument("--parity", choices=("none", "even", "odd", "mark", "space"),
                      default="none", help="parity (default none)")
    line.add_argument("--stop-bits", type=float, choices=(1, 1.5, 2), default=1,
                      help="stop bits (default 1)")
    line.add_argument("--flow", choices=("none", "rtscts", "xonxoff"), default="none",
                      help="flow control: none (default), RTS/CTS hardware, XON/XOFF software")
    line.add_argument("--dtr", action=argparse.BooleanOptionalAction, default=None,
                      help="raise (--dtr) or drop (--no-dtr) DTR when the port opens "
                           "(default: as the driver leaves it); a board wired to reset on "
                           "DTR stays up with --no-dtr")
    line.add_argument("--rts", action=argparse.BooleanOptionalAction, default=None,
                      help="raise or drop RTS when the port opens")
    line.add_argument("--imap", default="", metavar="MAPS",
                      help="map received bytes before lines are framed: crlf (CR is a line "
                           "end: boards that end lines with a lone CR), lfcr, bsdel, delbs; "
                           "comma-separated; the session keeps the bytes as received and the "
                           "map in its header")
    line.add_argument("--omap", default="", metavar="MAPS",
                      help="map typed bytes before they are sent: crlf (Enter sends LF), "
                           "crcrlf, igncr, lfcr, lfcrlf, ignlf, bsdel, delbs; comma-separated")


def add_log_option(parser: argparse.ArgumentParser, shown: str) -> None:
    """`--log FILE`: a plain-text copy of the console beside the session (`TextLog`)."""
    parser.add_argument("--log", type=Path, default=None, metavar="FILE",
                        help="also write the console as plain text to FILE, each line with "
                             f"{shown}; appended to, flushed at every read (the session stays "
                             "the exact record)")
