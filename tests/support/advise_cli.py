"""`bootlab advise` and `bootlab check` run in-process, as the command line runs them."""

from __future__ import annotations

import argparse

from bootlab.commands.advise import run_advise, run_check
from bootlab.commands.parsers import add_advise_parsers


def cli(*argv: str) -> int:
    """Run `advise ...` or `check ...`; the exit code."""
    parser = argparse.ArgumentParser(prog="bootlab")
    add_advise_parsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return run_advise(args) if args.command == "advise" else run_check(args)
