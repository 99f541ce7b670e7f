"""The arguments of the commands whose code is heavy to import: `report`, `initcalls`,
`advise`, `check`, `settings` and `tune`.

The whole parser is built on every run, so these are kept apart from the commands' code: a
`bootlab record` that imported the analysis, board control and rendering those commands run on
held ~9 MB more for the whole recording (`bench/soak.py`; `tests/test_import_hygiene.py`
checks that `record` loads none of them).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bootlab.commands.options import add_board_options
from bootlab.core.advice.uart import REFILLS
from bootlab.core.capture.sources import KINDS
from bootlab.core.render.formats import FORMATS


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
