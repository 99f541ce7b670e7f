"""Starting the app from the command line: a replay of a session, or a live port."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from bootlab.control.engine import RebootStrategy
from bootlab.control.linux import Credentials
from bootlab.core.analysis.goals import Goal, GoalError, goal_meta, parse_goal, with_goal
from bootlab.core.analysis.loading import resolve_profile
from bootlab.core.analysis.profiles import Profile, ProfileError
from bootlab.core.board.settings import Setting, SettingsError, load_settings, settings_dirs
from bootlab.core.capture.linemap import ByteMap, parse_maps
from bootlab.core.capture.redaction import SecretInput
from bootlab.core.capture.session import iter_sessions
from bootlab.core.capture.sources import SourceError
from bootlab.core.capture.textlog import TextLog, TextLogError
from bootlab.core.files.config import examples_dir, sessions_dir
from bootlab.exitcodes import BAD_INPUT, OK, PORT_FAILED
from bootlab.session.live import LiveLink
from bootlab.session.replay import open_replay
from bootlab.transports.line import line_of
from bootlab.transports.place import POWER_OFF_S, PlaceSpec, place_spec
from bootlab.ui.app import BootlabApp

DEFAULT_BAUD = 115200


def _settings(sessions: Path | None, notices: list[str]) -> list[Setting]:
    try:
        return load_settings(settings_dirs(sessions))
    except SettingsError as error:
        notices.append(f"settings: {error}; showing none")
        return []


def first_example() -> Path | None:
    """The first bundled example session with the factory settings (label `default`)."""
    folder = examples_dir()
    paths = list(iter_sessions(folder)) if folder else []
    defaults = [path for path in paths if "-default-" in path.name]
    return next(iter(defaults or paths), None)


def listed_folder(option: Path | None) -> Path:
    """The folder the sessions screen lists: `--sessions DIR`; without it ./sessions, or the
    bundled examples when ./sessions holds none."""
    folder = sessions_dir(option)
    if option is None and next(iter_sessions(folder), None) is None:
        return examples_dir() or folder
    return folder


def replay_app(path: Path, speed: float = 1.0, sessions: Path | None = None) -> BootlabApp:
    """The app replaying a session file.

    Raises:
        SourceError: the file is not a readable session.
    """
    replay = open_replay(path, sessions, speed)
    notices = list(replay.notices)
    return BootlabApp(replay.player, replay.profile, _settings(sessions, notices), notices,
                      sessions=listed_folder(sessions))


def live_app(port: str, baud: int | None, profile: Profile, sessions: Path | None,
             label: str = "", board: str = "",
             secret_prompt: re.Pattern[str] | None = None,
             goal: Goal | None = None, place: PlaceSpec | None = None,
             power_off_s: float = POWER_OFF_S) -> tuple[BootlabApp, LiveLink]:
    """The app on a live port, or a labgrid place (acquired on the port's thread once the app
    runs; `port` is then `place:NAME`), and the link (wait for it to close after the app
    ends); the board keys measure boots to `goal` (default login), stored with the sessions."""
    notices: list[str] = []
    goal = goal or Goal()
    meta: dict[str, object] = {"label": label, "board": board, "port": port, "baud": baud,
                               "profile": profile.name, "goal": goal_meta(goal),
                               "settings": {"bootloader": {}, "cmdline": None}}
    link = LiveLink(port, baud or (None if place else DEFAULT_BAUD), with_goal(profile, goal),
                    sessions_dir(sessions), meta, place=place, power_off_s=power_off_s)
    link.secrets = SecretInput(secret_prompt)
    return BootlabApp(link, profile, _settings(sessions, notices), notices,
                      sessions=sessions_dir(sessions)), link


def run_examples(sessions: Path | None = None) -> int:
    """`bootlab` on a terminal: the app replaying the first bundled example boot."""
    path = first_example()
    if path is None:
        sys.stderr.write("bootlab: no bundled example sessions found; try `bootlab --help`\n")
        return BAD_INPUT
    try:
        app = replay_app(path, sessions=sessions)
    except SourceError as error:
        sys.stderr.write(f"bootlab: {error}\n")
        return BAD_INPUT
    app.run()
    return OK


def run_replay_file(path: Path, sessions: Path | None = None, speed: float = 1.0) -> int:
    """`bootlab FILE`: the app replaying a session or boot log."""
    if speed < 0:
        sys.stderr.write("bootlab: --speed must be 0 (at once) or more\n")
        return BAD_INPUT
    try:
        app = replay_app(path, speed, sessions)
    except SourceError as error:
        sys.stderr.write(f"bootlab: {error}\n")
        return BAD_INPUT
    app.run()
    return OK


def login_of(args: argparse.Namespace) -> tuple[Credentials, bool]:
    """Who the board keys log in as (`--user`, `--password`), and whether their boots read
    the boot's dmesg after the goal: `--collect` / `--no-collect`, else when a login was
    given."""
    given = args.user is not None or args.password is not None
    return (Credentials(args.user or "root", args.password),
            given if args.collect is None else args.collect)


def run_live(args: argparse.Namespace) -> int:
    """`bootlab PORT`: the app on a port, recording a session."""
    try:
        profile = resolve_profile(args.profile, args.sessions)
        goal = parse_goal(args.until, args.pattern, profile, args.all)
        secret = re.compile(args.secret_prompt) if args.secret_prompt else None
        imap, omap = parse_maps(args.imap, args.omap)
    except (ProfileError, GoalError, re.error, ValueError) as error:
        sys.stderr.write(f"bootlab: {error}\n")
        return BAD_INPUT
    place = None if args.port else place_spec(args.place, args.coordinator, args.release_stale)
    if args.port and args.place:
        sys.stderr.write(f"bootlab: give a port ({args.port}) or --place {args.place}, "
                         "not both\n")
        return BAD_INPUT
    try:
        reboot = RebootStrategy.of(args.reboot, args.power_cmd, args.power_on_cmd,
                                   args.power_off_cmd, args.power_off)
    except ValueError as error:
        sys.stderr.write(f"bootlab: {error}\n")
        return BAD_INPUT
    if reboot.kind == "power" and not (reboot.command or reboot.on_command) and place is None:
        sys.stderr.write("bootlab: --reboot power needs --power-cmd COMMAND or "
                         "--power-on-cmd COMMAND\n")
        return BAD_INPUT
    port = args.port or f"place:{place.name if place else ''}"
    app, link = live_app(port, args.baud, profile, args.sessions, args.label, args.board,
                         secret, goal, place, args.power_off)
    link.reboot = reboot
    link.line, link.omap = line_of(args), ByteMap(omap)
    if imap:
        link.meta["imap"] = list(imap)
    link.local_echo = args.echo
    link.credentials, link.collect = login_of(args)
    if args.log is not None:
        try:
            link.text_log = TextLog(args.log)
        except TextLogError as error:
            sys.stderr.write(f"bootlab: {error}\n")
            return BAD_INPUT
    app.run()
    if not link.wait_closed():
        sys.stderr.write("bootlab: the session did not close in time; it may end "
                         "without its last records\n")
        return PORT_FAILED
    if link.failure is not None:
        sys.stderr.write(f"bootlab: {link.failure}\n")
        return PORT_FAILED
    return OK
