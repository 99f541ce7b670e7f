"""The whole `bootlab` command line, defined in one place: the subcommands' parsers
(`build_parser`), the app's on a port (`build_console_parser`) and on a file
(`build_file_parser`), and the option groups they share.

No command's code is imported here: the parser is built on every run, and a `bootlab record`
that imported the analysis, board control and rendering other commands run on held ~9 MB more
for the whole recording (`bench/soak.py`; `tests/test_import_hygiene.py` checks that `record`
loads none of them). `bootlab.cli` dispatches the parsed command by a table.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bootlab import __version__
from bootlab.core.advice.uart import REFILLS
from bootlab.core.capture.sources import KINDS
from bootlab.core.render.formats import FORMATS


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """`--profile` and `--sessions`, which most commands take."""
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
                        metavar="DIR", help="the sessions folder (default: ./sessions): with no "
                                            "command the one the app's sessions screen lists; "
                                            "before a command, that command's --sessions")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    rec = sub.add_parser("record", help="record boots from a serial port or URL")
    add_port_options(rec, "device path (/dev/ttyUSB0, /dev/pts/3) or pyserial URL "
                          "(socket://host:port)")
    add_line_options(rec)
    add_log_option(rec, "its time column as echoed ([elapsed delta] text)")
    rec.add_argument("--no-power", dest="power", action="store_false",
                     help="with a place: do not power-cycle its board, record what comes")
    add_power_switch_options(rec, "once the port is open: ")
    rec.add_argument("--label", default="", help="variant label stored with the session")
    rec.add_argument("--board", default="", help="board name stored with the session")
    rec.add_argument("--until", action="append", default=[], metavar="MILESTONE",
                     help="a boot is done at this milestone id (repeatable; e.g. login)")
    rec.add_argument("--pattern", default=None, metavar="REGEX",
                     help="a boot is done when a line matches this (stored with the session "
                          "as milestone `goal`)")
    add_all_option(rec)
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
    add_common_options(rec)

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
    add_common_options(ana)

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
    add_common_options(cmp_)

    rep = sub.add_parser("replay", help="print a recorded boot with its original timing")
    rep.add_argument("path", type=Path)
    rep.add_argument("--speed", type=float, default=1.0,
                     help="playback speed (0 = instant; default 1)")
    rep.add_argument("--timestamps", action="store_true",
                     help="prefix lines with [elapsed delta]")

    ses = sub.add_parser("sessions", help="list recorded boots")
    ses.add_argument("--json", action="store_true")
    add_common_options(ses)

    exp = sub.add_parser("export", help="export a session or log")
    exp.add_argument("path", type=Path)
    exp.add_argument("--format", required=True,
                     choices=["asciicast", "jsonl", "csv", "markdown"])
    exp.add_argument("-o", "--output", type=Path, default=None,
                     help="write here instead of stdout")
    exp.add_argument("--reference", default=None, metavar="MILESTONE")
    add_common_options(exp)

    pro = sub.add_parser("profiles", help="list marker profiles and check user profiles")
    pro.add_argument("--show", metavar="NAME", help="print one profile's milestones")
    add_common_options(pro)

    sub.add_parser("ports", help="list serial ports")

    boot = sub.add_parser("boot", help="stop autoboot, apply settings, boot and measure")
    add_board_options(boot)
    boot.add_argument("--set", action="append", default=[], metavar="ITEM",
                      help="a setting: ID, ID=VALUE, uboot:VAR=VALUE, cmdline+=TOKEN, "
                           "cmdline-=TOKEN (repeatable; see `bootlab settings`)")
    boot.add_argument("--label", default="", help="variant label stored with the session")
    boot.add_argument("--budget", default=None, metavar="FILE",
                      help="check the measured boot against a budget file, as `bootlab check` "
                           "(each goal its own budget: display = 5, sound = 3); exit 1 when "
                           "one is missed")
    boot.add_argument("--dry-run", action="store_true",
                      help="show what would be sent, then leave the board at its prompt")
    add_common_options(boot)

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
    add_common_options(ab)

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
    add_power_options(parser)
    parser.add_argument("--user", default=None,
                        help="who the board keys log in as after a goal (default root)")
    parser.add_argument("--password", default=None,
                        help="their login password (stored redacted in sessions)")
    parser.add_argument("--collect", action=argparse.BooleanOptionalAction, default=None,
                        help="the board keys' boots (P, T, tune) log in after the goal and read "
                             "the boot's dmesg: the kernel milestones the console did not show "
                             "(quiet) join the phase pane, as `boot --collect` (the dialogs "
                             "ask; default: on when --user or --password is given)")
    add_goal_options(parser)
    add_common_options(parser)
    return parser


def build_file_parser() -> argparse.ArgumentParser:
    """The arguments of `bootlab FILE`: the app replaying a recorded boot."""
    parser = argparse.ArgumentParser(
        prog="bootlab FILE", description="The app replaying a session or boot log (a "
        "grabserial log, a capture): the console at its recorded pace, the phases, seeking.")
    parser.add_argument("path", type=Path, help="a session (.jsonl) or boot log")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="playback speed (0 = at once; default 1)")
    add_common_options(parser)
    return parser


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
    parser.add_argument("--collect", action="store_true",
                        help="after the goal, log in and read the boot's dmesg (and, on a "
                             "systemd board, systemd's record of its units) into its session: "
                             "`analyze` then shows the kernel milestones and units the console "
                             "did not (quiet), placed on the session's clock where the board's "
                             "clock kept time; before `boot` at the U-Boot prompt, U-Boot's "
                             "bootstage report is read too")
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
    add_power_options(parser)
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
    parser.add_argument("--until", action="append", default=[], metavar="MILESTONE",
                        help="the boot is measured up to this milestone id of the profile, a "
                             "systemd unit (unit:NAME), a shell command (ready:COMMAND) or a "
                             "journal message (journal:REGEX) (default login; repeatable: "
                             "the first reached, or with --all each of them)")
    parser.add_argument("--pattern", default=None, metavar="REGEX",
                        help="the boot is measured up to the first line matching this (an "
                             "application's 'display on', a shell prompt); it is stored as "
                             "milestone `goal`")
    add_all_option(parser)


def add_all_option(parser: argparse.ArgumentParser) -> None:
    """`--all`: several goals are each to be reached (`boot`, `record`, the app)."""
    parser.add_argument("--all", action="store_true",
                        help="with several goals (--until repeated, --pattern): the boot is "
                             "followed until each is reached, and is done at the last of them "
                             "(\"display in 5 s and sound in 3 s\"; budgets: `check`)")


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


def add_power_options(parser: argparse.ArgumentParser) -> None:
    """The commands `--reboot power` runs (each without a shell): one power cycle, or a
    power-on command (with a power-off one before it) whose return is time zero."""
    parser.add_argument("--power-cmd", default=None, metavar="COMMAND",
                        help="power-cycle command for --reboot power (with --place: the "
                             "place's power resource); when in it the power came back is "
                             "not known, so the boot's table starts at its first byte")
    add_power_switch_options(parser, "instead of --power-cmd: ")


def add_power_switch_options(parser: argparse.ArgumentParser, lead: str = "") -> None:
    """A power-on command whose return is stamped as time zero, and its power-off one."""
    parser.add_argument("--power-on-cmd", default=None, metavar="COMMAND",
                        help=f"{lead}a command that switches the power on (or presses reset) "
                             "and returns, run without a shell; its start is stamped as the "
                             "boot's time zero, its run time (when the switch came) said with "
                             "it")
    parser.add_argument("--power-off-cmd", default=None, metavar="COMMAND",
                        help="with --power-on-cmd: the command switching the power off, run "
                             "--power-off seconds before it")


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


def _report_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", type=Path, nargs="+", metavar="SESSION",
                        help="session files or logs (grabserial, dmesg, plain captures)")
    parser.add_argument("--kind", choices=KINDS, help="input kind (default: detected)")


def add_report_parsers(sub: Any) -> None:
    """Add `report` and `initcalls` to the CLI's subparsers (`sub` from add_subparsers)."""
    rep = sub.add_parser("report", help="a report of recorded boots: phases, timeline, "
                                        "A/B statistics, initcalls, recommendations; or of "
                                        "a tune run (its tune-NAME.json alone)")
    _report_inputs(rep)
    rep.add_argument("--format", choices=FORMATS, default="markdown",
                     help="markdown (default), html (one self-contained file), csv, json")
    rep.add_argument("-o", "--output", type=Path, default=None,
                     help="write here instead of stdout")
    rep.add_argument("--top", type=int, default=15, metavar="N",
                     help="initcalls listed and charted per session (default 15)")
    rep.add_argument("--reference", default=None, metavar="MILESTONE",
                     help="measure elapsed times from this milestone (default: first byte)")
    rep.add_argument("--profile", default=None,
                     help="marker profile: a built-in name, a user profile's name or a "
                          ".toml path (default: the one recorded, else linux)")
    rep.add_argument("--sessions", type=Path, default=None, metavar="DIR",
                     help="sessions folder, for user profiles (default: ./sessions)")

    ini = sub.add_parser("initcalls", help="initcall_debug timings: top N, total, bootgraph; "
                                           "differences between boots or labels")
    _report_inputs(ini)
    ini.add_argument("--top", type=int, default=20, metavar="N",
                     help="initcalls listed and charted (default 20)")
    ini.add_argument("--width", type=int, default=None, metavar="COLUMNS",
                     help="chart width (default: the terminal's)")
    ini.add_argument("--json", action="store_true", help="print JSON")


def _advise_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", choices=KINDS, help="input kind (default: detected)")
    parser.add_argument("--profile", default=None,
                        help="marker profile: a built-in name, a user profile's name or a "
                             ".toml path (default: the one a session was recorded with)")
    parser.add_argument("--sessions", type=Path, default=None, metavar="DIR",
                        help="sessions folder, for user profiles (default: ./sessions)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def add_advise_parsers(sub: Any) -> None:
    """Add `advise` and `check` to the CLI's subparsers (`parser.add_subparsers()`)."""
    adv = sub.add_parser("advise", help="what to change next, ranked by predicted saving")
    adv.add_argument("paths", type=Path, nargs="+", metavar="SESSION",
                     help="boots of one board (several: predictions are their median)")
    adv.add_argument("--ab", type=Path, nargs="+", default=[], metavar="SESSION",
                     help="sessions of `bootlab ab` runs (also those the app runs), their "
                          "ab-NAME.json state, or a folder of such states: the measured "
                          "differences are shown beside the predictions")
    adv.add_argument("--uart-fifo", type=_bytes, default=0, metavar="BYTES",
                     help="console UART's transmit buffer, for the cost of console output "
                          "(default 0: Linux's 8250/PL011 consoles wait for it to empty after "
                          "each message; 4096 for the QEMU board's uart-proxy)")
    adv.add_argument("--uart-refill", choices=REFILLS, default="room",
                     help="room: the buffer takes a byte as soon as one leaves (a FIFO); "
                          "empty: once full, only after it has drained (a pipe, as behind "
                          "the QEMU board's uart-proxy)")
    _advise_inputs(adv)
    chk = sub.add_parser("check", help="milestone budgets per boot; exit 1 when one is missed")
    chk.add_argument("paths", type=Path, nargs="+", metavar="SESSION")
    chk.add_argument("--budget", default=None, metavar="FILE",
                     help="budget TOML ([budgets] login = 5.0); a bare NAME is "
                          "<config>/budgets/NAME.toml; default <config>/budgets.toml")
    chk.add_argument("--junit", type=Path, default=None, metavar="OUT.xml",
                     help="also write the verdicts as JUnit XML")
    _advise_inputs(chk)


def _bytes(text: str) -> int:
    """A byte count of 0 or more (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r}")
    return value


def add_settings_parser(sub: Any) -> None:
    """Add `settings` to the CLI's subparsers (`parser.add_subparsers()`)."""
    parser = sub.add_parser(
        "settings", help="list the one-key settings and their keys; with --from, their states "
                         "in a recorded boot",
        description="The one-key settings (built-in and the user's) with their keys. With "
                    "--from, each setting's state in the last boot of a session or log (on, "
                    "off, n/a, unknown), the value seen and what shows it: a log line (log N), "
                    "a conclusion from the log (inferred), the session header (session).")
    parser.add_argument("--from", dest="log", type=Path, default=None, metavar="PATH",
                        help="a session, grabserial log, plain capture or dmesg output")
    parser.add_argument("--kind", choices=KINDS, help="with --from: input kind (default: "
                                                      "detected)")
    parser.add_argument("--json", action="store_true", help="with --from: print JSON")
    parser.add_argument("--profile", default=None,
                        help="with --from: marker profile: a built-in name, a user profile's "
                             "name or a .toml path (default: linux)")
    parser.add_argument("--sessions", type=Path, default=None, metavar="DIR",
                        help="sessions folder, for user settings and profiles (default: "
                             "./sessions)")


def add_tune_parser(sub: Any) -> None:
    """Add `tune` to the CLI's subparsers."""
    tune = sub.add_parser("tune", conflict_handler="resolve",
                          help="cut the boot time unattended: rank, A/B, keep what is proven")
    add_board_options(tune)
    tune.add_argument("--budget", default=None, metavar="DURATION",
                      help="stop once the goal's median is at or below this (3s, 2500ms)")
    tune.add_argument("--keep-going", action="store_true",
                      help="go on past the budget while something predicted is left (a "
                           "rejected candidate never stops the tune: the next one is tried)")
    tune.add_argument("--max-hours", type=float, default=None, metavar="H",
                      help="stop starting steps after H hours")
    tune.add_argument("--max-steps", type=int, default=None, metavar="N",
                      help="stop after N steps (settings tried)")
    tune.add_argument("--max-boots", type=int, default=8, metavar="N",
                      help="boots per variant at most in each step's A/B run (default 8)")
    tune.add_argument("--baseline-boots", type=int, default=6, metavar="N",
                      help="boots of the board as it is, first, at most: 3, then one more "
                           "at a time while the goal's spread is over 5%% of its median "
                           "(default 6)")
    tune.add_argument("--effect", default="50ms", metavar="DURATION",
                      help="the smallest saving that matters (default 50ms)")
    tune.add_argument("--try", dest="tries", action="append", default=[], metavar="ITEM",
                      help="a setting to test first, before the recommendations (repeatable; "
                           "as `bootlab ab --variant` takes items)")
    tune.add_argument("--name", default="tune",
                      help="name of the tune (its state: sessions/tune-NAME.json)")
    tune.add_argument("--restore", action="store_true",
                      help="put the U-Boot environment back as the tune NAME found it, "
                           "then exit (saved again if the tune used --persist)")
    tune.add_argument("--sessions", type=Path, default=None, metavar="DIR",
                      help="sessions folder (default: ./sessions)")
    tune.add_argument("--profile", default=None, help="marker profile (default: linux)")
