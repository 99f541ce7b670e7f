"""The `bootlab` command line: stdout is data, stderr is diagnostics, exit codes mean something.

Exit codes (`bootlab.exitcodes`): 0 success; 1 the goal was not met (a stop milestone never
came, a timeout); 2 bad usage, unreadable input or a bad profile; 3 the port failed (missing,
busy, unplugged).

With no command the console app replays a bundled example boot, but only on a terminal: in a
pipe or a script the examples' comparison is printed instead. A first argument that is neither
a command nor an option is a port: `bootlab PORT` opens the app live on it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bootlab import __version__
from bootlab.exitcodes import BAD_INPUT, OK


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default=None,
                        help="marker profile: a built-in name (linux, resume), a user "
                             "profile's name or a .toml path (default: linux)")
    parser.add_argument("--sessions", type=Path, default=None, metavar="DIR",
                        help="sessions folder (default: ./sessions)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one subcommand per verb."""
    parser = argparse.ArgumentParser(
        prog="bootlab",
        usage="bootlab [-h] [--version] [--sessions DIR] [COMMAND ... | PORT [--baud N] "
              "[--label L] [--board B] [--sessions DIR]]",
        description="Boot-time bench console: timestamped serial capture, boot phases, "
                    "sessions.",
        epilog="With no command, on a terminal, the console app replays a bundled example "
               "boot; when stdout is not a terminal (a pipe, a script, CI) the bundled "
               "examples are compared instead, as `bootlab compare examples/*.jsonl` does. "
               "`bootlab PORT` (a device path or a pyserial URL) opens the console app live "
               "on that port and records a session; `bootlab PORT --help` lists its options.")
    parser.add_argument("--version", action="version", version=f"bootlab {__version__}")
    parser.add_argument("--sessions", dest="app_sessions", type=Path, default=None,
                        metavar="DIR", help="with no command: the sessions folder the app's "
                                            "sessions screen lists (default: ./sessions)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    rec = sub.add_parser("record", help="record boots from a serial port or URL")
    from bootlab.commands.options import add_line_options, add_log_option, add_port_options

    add_port_options(rec, "device path (/dev/ttyUSB0, /dev/pts/3) or pyserial URL "
                          "(socket://host:port)")
    add_line_options(rec)
    add_log_option(rec, "its time column as echoed ([elapsed delta] text)")
    rec.add_argument("--no-power", dest="power", action="store_false",
                     help="with a place: do not power-cycle its board, record what comes")
    rec.add_argument("--label", default="", help="variant label stored with the session")
    rec.add_argument("--board", default="", help="board name stored with the session")
    rec.add_argument("--until", action="append", default=[], metavar="MILESTONE",
                     help="a boot is done at this milestone id (repeatable; e.g. login)")
    rec.add_argument("--pattern", default=None, metavar="REGEX",
                     help="a boot is done when a line matches this (stored with the session "
                          "as milestone `goal`)")
    rec.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                     help="give up on a boot after this long")
    rec.add_argument("--boots", type=int, default=1, metavar="N",
                     help="record N boots, one session file each (default 1)")
    rec.add_argument("--send", default=None, metavar="TEXT",
                     help="send this once the port is open (\\r, \\n escapes allowed)")
    rec.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                     help="a setting in force, stored with the session (bootloader "
                          "variable NAME=VALUE, or cmdline=...)")
    rec.add_argument("-q", "--quiet", action="store_true",
                     help="do not print received lines on stdout")
    rec.add_argument("--reconnect", action=argparse.BooleanOptionalAction, default=None,
                     help="ride out a lost port (unplug, peer gone): record the gap and "
                          "reopen it every 0.1 s (default: on, except for exec:)")
    _common(rec)

    ana = sub.add_parser("analyze", help="phase table of a session or a log")
    ana.add_argument("path", type=Path)
    ana.add_argument("--json", action="store_true", help="print JSON")
    ana.add_argument("--kind", choices=["session", "grabserial", "plain", "dmesg"],
                     help="input kind (default: detected)")
    ana.add_argument("--reference", default=None, metavar="MILESTONE",
                     help="measure elapsed times from this milestone (default: first byte)")
    ana.add_argument("--explain", action="store_true",
                     help="for each standard milestone not found: the nearest lines and why "
                          "each was not taken, and a profile snippet that would add it")
    ana.add_argument("--budget", default=None, metavar="FILE",
                     help="show each boot's budgets as pass/fail (see `bootlab check`)")
    _common(ana)

    cmp_ = sub.add_parser("compare", help="boots side by side with deltas")
    cmp_.add_argument("paths", type=Path, nargs="+")
    cmp_.add_argument("--json", action="store_true")
    cmp_.add_argument("--no-group", action="store_true",
                      help="one column per boot even when labels are shared")
    cmp_.add_argument("--by-board", action="store_true",
                      help="group by label and board (the session's --board, else its port): "
                           "one column per LABEL@BOARD")
    cmp_.add_argument("--reference", default=None, metavar="MILESTONE")
    cmp_.add_argument("--include-incomplete", action="store_true",
                      help="keep boots with a gap in their recording (their times on one "
                           "side of the gap); by default they are left out, and named")
    _common(cmp_)

    rep = sub.add_parser("replay", help="print a recorded boot with its original timing")
    rep.add_argument("path", type=Path)
    rep.add_argument("--speed", type=float, default=1.0,
                     help="playback speed (0 = instant; default 1)")
    rep.add_argument("--timestamps", action="store_true",
                     help="prefix lines with [elapsed delta]")

    ses = sub.add_parser("sessions", help="list recorded boots")
    ses.add_argument("--json", action="store_true")
    _common(ses)

    exp = sub.add_parser("export", help="export a session or log")
    exp.add_argument("path", type=Path)
    exp.add_argument("--format", required=True,
                     choices=["asciicast", "jsonl", "csv", "markdown"])
    exp.add_argument("-o", "--output", type=Path, default=None,
                     help="write here instead of stdout")
    exp.add_argument("--reference", default=None, metavar="MILESTONE")
    _common(exp)

    pro = sub.add_parser("profiles", help="list marker profiles and check user profiles")
    pro.add_argument("--show", metavar="NAME", help="print one profile's milestones")
    _common(pro)

    sub.add_parser("ports", help="list serial ports")

    from bootlab.commands.options import add_board_options

    boot = sub.add_parser("boot", help="stop autoboot, apply settings, boot and measure")
    add_board_options(boot)
    boot.add_argument("--set", action="append", default=[], metavar="ITEM",
                      help="a setting: ID, ID=VALUE, uboot:VAR=VALUE, cmdline+=TOKEN, "
                           "cmdline-=TOKEN (repeatable; see `bootlab settings`)")
    boot.add_argument("--label", default="", help="variant label stored with the session")
    boot.add_argument("--dry-run", action="store_true",
                      help="show what would be sent, then leave the board at its prompt")
    _common(boot)

    ab = sub.add_parser("ab", help="A/B boots: variants interleaved, with statistics")
    add_board_options(ab, several=True)
    ab.add_argument("--also-port", action="append", default=[], metavar="PORT",
                    help="another identical board (repeatable): the boots are spread over the "
                         "boards in parallel, each board booting every variant equally often, "
                         "and the statistics are blocked by board; `{port}` in --power-cmd "
                         "becomes each board's port; with --board NAME each is NAME@PORT")
    ab.add_argument("--variant", action="append", default=[], metavar="NAME:SPEC",
                    help="a variant: NAME:ITEM,ITEM... (NAME: alone = the board as it is)")
    ab.add_argument("--boots", type=int, default=5, metavar="N", help="boots per variant")
    ab.add_argument("--until-decided", action="store_true",
                    help="boot in rounds until the goal's interval decides (faster, slower, "
                         "or within --effect), judged at planned looks that keep the error "
                         "rate at 5%%; prints a power table first")
    ab.add_argument("--effect", default="50ms", metavar="DURATION",
                    help="the smallest difference that matters: 50ms, 0.05s, 2s (default 50ms)")
    ab.add_argument("--max-boots", type=int, default=40, metavar="N",
                    help="--until-decided: boots per variant at most (default 40)")
    ab.add_argument("--name", default="ab", help="name of the run (resumable by name)")
    ab.add_argument("--seed", type=int, default=None, help="order seed (default: random)")
    ab.add_argument("--reference", default=None, metavar="MILESTONE",
                    help="report times from this milestone (e.g. starting_kernel: the "
                         "kernel's share, free of bootloader noise)")
    _common(ab)

    from bootlab.commands.parsers import (
        add_advise_parsers,
        add_report_parsers,
        add_settings_parser,
        add_tune_parser,
    )

    add_report_parsers(sub)
    add_advise_parsers(sub)
    add_settings_parser(sub)
    add_tune_parser(sub)
    return parser


def build_console_parser() -> argparse.ArgumentParser:
    """The arguments of `bootlab PORT`: the console app on a live port."""
    parser = argparse.ArgumentParser(
        prog="bootlab PORT",
        description="The console app on a live port: lines with their times, the phase "
                    "table as the board boots, the one-key settings; everything received "
                    "is recorded in a session file. Ctrl-T ? lists the keys.")
    from bootlab.commands.options import (
        add_goal_options,
        add_line_options,
        add_log_option,
        add_port_options,
    )

    add_port_options(parser, "device path (/dev/ttyUSB0, /dev/pts/3) or pyserial URL "
                             "(socket://host:port)")
    add_line_options(parser)
    add_log_option(parser, "the console's time column as shown when it arrived (m changes "
                           "it; off: none)")
    parser.add_argument("--echo", action="store_true",
                        help="local echo: show what you type in the console (dimmed, after "
                             "the board's text; a password as dots) for a board that does "
                             "not echo; Ctrl-T l toggles it")
    parser.add_argument("--label", default="", help="variant label stored with the session")
    parser.add_argument("--board", default="", help="board name stored with the session")
    parser.add_argument("--secret-prompt", default=None, metavar="REGEX",
                        help="keys typed at a line matching this are stored redacted (default: "
                             "Password:, passphrase ...:)")
    parser.add_argument("--reboot", default=None, choices=["auto", "dtr", "rts", "power"],
                        help="how the app's reboot key (R) restarts the board: auto (U-Boot "
                             "reset / reboot -f), a DTR or RTS pulse, or the --power-cmd (a "
                             "--place's power resource; default power for a place that has "
                             "one, else auto)")
    parser.add_argument("--power-cmd", default=None, metavar="COMMAND",
                        help="power-cycle command for --reboot power (run without a shell)")
    add_goal_options(parser)
    _common(parser)
    return parser


def _names_place(argv: list[str]) -> bool:
    """Whether the arguments name a labgrid place (`--place NAME`): the app on that place."""
    return any(arg == "--place" or arg.startswith("--place=") for arg in argv)


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    return {name for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) for name in action.choices}


def _run_console(argv: list[str]) -> int:
    """`bootlab PORT ...` or `bootlab --place NAME ...`: the app, on a terminal only
    (`bootlab record` is the headless way); `bootlab FILE` (a session, a grabserial log, a
    capture: a regular file, never a device) replays it in the app."""
    port = argv[0]
    if Path(port).is_file():
        return _run_file(argv)
    if not _names_place(argv) and not any(mark in port for mark in ("/", ":")):
        sys.stderr.write(f"bootlab: {port!r} is neither a command nor a port (a device path "
                         "or URL); see `bootlab --help`\n")
        return BAD_INPUT
    args = build_console_parser().parse_args(argv)
    if args.port:
        args.baud = args.baud or 115200  # a place's console has its own speed
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        what = port if args.port else f"--place {args.place}"
        sys.stderr.write("bootlab: the console app needs a terminal; to capture without one "
                         f"use `bootlab record {what}`\n")
        return BAD_INPUT
    # Deferred: only the app loads textual.
    from bootlab.ui.launch import run_live

    return run_live(args)


def _run_file(argv: list[str]) -> int:
    """`bootlab FILE [--sessions DIR] [--speed X]`: the app replaying a recorded boot."""
    parser = argparse.ArgumentParser(
        prog="bootlab FILE", description="The app replaying a session or boot log (a "
        "grabserial log, a capture): the console at its recorded pace, the phases, seeking.")
    parser.add_argument("path", type=Path, help="a session (.jsonl) or boot log")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="playback speed (0 = at once; default 1)")
    _common(parser)
    args = parser.parse_args(argv)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write("bootlab: the app needs a terminal; without one use `bootlab "
                         f"analyze {args.path}` or `bootlab replay {args.path}`\n")
        return BAD_INPUT
    from bootlab.ui.launch import run_replay_file

    return run_replay_file(args.path, args.sessions, args.speed)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if arguments and arguments[0] not in _commands(parser) \
            and (not arguments[0].startswith("-") or _names_place(arguments)):
        return _run_console(arguments)
    args = parser.parse_args(arguments)
    if args.command is None and sys.stdin.isatty() and sys.stdout.isatty():
        from bootlab.ui.launch import run_examples

        return run_examples(args.app_sessions)
    # Imports are deferred so `bootlab analyze` never loads pyserial, and the core stays
    # importable without the transports.
    if args.command == "record":
        from bootlab.commands.record import run_record

        return run_record(args)
    from bootlab.commands import reading

    handlers = {
        None: reading.run_default, "analyze": reading.run_analyze,
        "compare": reading.run_compare, "replay": reading.run_replay,
        "sessions": reading.run_sessions, "export": reading.run_export,
        "profiles": reading.run_profiles,
    }
    if args.command in ("advise", "check"):
        from bootlab.commands import advise as advise_command

        return advise_command.run_advise(args) if args.command == "advise" \
            else advise_command.run_check(args)
    if args.command in ("report", "initcalls"):
        from bootlab.commands import report as report_command

        run = report_command.run_report if args.command == "report" \
            else report_command.run_initcalls
        return run(args)
    if args.command == "settings":
        from bootlab.commands import settings as settings_command

        return settings_command.run_settings(args)
    if args.command == "tune":
        from bootlab.commands import tune as tune_command

        return tune_command.run_tune_command(args)
    if args.command in ("boot", "ab"):
        from bootlab.commands import ab, board

        return board.run_boot(args) if args.command == "boot" else ab.run_ab(args)
    if args.command == "ports":
        from bootlab.commands.record import run_ports

        return run_ports(args)
    try:
        return handlers[args.command](args)
    except BrokenPipeError:
        sys.stderr.close()
        return OK
