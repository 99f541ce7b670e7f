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
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path

from bootlab.commands.parsers import build_console_parser, build_file_parser, build_parser
from bootlab.exitcodes import BAD_INPUT, OK

COMMANDS: dict[str | None, tuple[str, str]] = {
    None: ("reading", "run_default"),
    "record": ("record", "run_record"), "ports": ("record", "run_ports"),
    "analyze": ("reading", "run_analyze"), "compare": ("reading", "run_compare"),
    "replay": ("reading", "run_replay"), "sessions": ("reading", "run_sessions"),
    "export": ("reading", "run_export"), "profiles": ("reading", "run_profiles"),
    "advise": ("advise", "run_advise"), "check": ("advise", "run_check"),
    "report": ("report", "run_report"), "initcalls": ("report", "run_initcalls"),
    "settings": ("settings", "run_settings"), "tune": ("tune", "run_tune_command"),
    "boot": ("board", "run_boot"), "ab": ("ab", "run_ab"),
}
"""Command -> (module of `bootlab.commands`, its function). A command's module is imported
only when it runs, so `bootlab analyze` never loads pyserial and `record` none of the
analysis, board control and rendering the others need."""
QUIET_ON_CLOSED_PIPE = {None, "analyze", "compare", "replay", "sessions", "export",
                        "profiles"}
"""Commands whose output is often cut short (`| head`): a closed pipe ends them quietly."""


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
    args = build_file_parser().parse_args(argv)
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
    if getattr(args, "sessions", False) is None:  # `bootlab --sessions DIR COMMAND ...`
        args.sessions = args.app_sessions
    if args.command is None and sys.stdin.isatty() and sys.stdout.isatty():
        from bootlab.ui.launch import run_examples

        return run_examples(args.app_sessions)
    module, name = COMMANDS[args.command]
    run: Callable[[argparse.Namespace], int] = getattr(
        import_module(f"bootlab.commands.{module}"), name)
    if args.command not in QUIET_ON_CLOSED_PIPE:
        return run(args)
    try:
        return run(args)
    except BrokenPipeError:
        sys.stderr.close()
        return OK
