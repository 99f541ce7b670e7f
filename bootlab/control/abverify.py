"""Evidence per A/B boot: check that the variant's settings were in force, on the bench.

After each measured boot `verify_boot` reads the boot's session back, holds the variant's
claims against it (`board.verify.check_boot`), reads `/proc/cmdline` after login when the log
cannot tell a kernel parameter and the board offers a login, and records the checks in the
boot's session (a meta record `verified`). A boot that contradicts its variant stops the run
with `NotInForce`: its verdict would compare settings that were never applied.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bootlab.control.engine import Bench, BootResult
from bootlab.core.analysis.bootlog import BootLog, read_boot
from bootlab.core.board.abplan import ABState
from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.verify import (
    PROC_CMDLINE,
    Check,
    Claim,
    arguments_source,
    check_boot,
    contradiction_text,
    wants_proc_cmdline,
)
from bootlab.core.capture.session import load_session


class NotInForce(Exception):
    """A measured boot showed a setting against its variant; the message says what was
    expected, the line that shows otherwise and where the board's arguments come from."""


def verify_boot(bench: Bench, result: BootResult, claims: Sequence[Claim],
                baud: int | None) -> tuple[list[Check], BootLog]:
    """Check one measured boot (it reached its goal; its session is the open one) and record
    the checks in its session.

    Args:
        bench: the bench, right after the boot.
        result: the boot.
        claims: its variant's claims (`board.verify.run_claims`).
        baud: the rate the port was switched to for the variant, if it was.
    """
    recorder = bench.console.recorder
    writer = recorder.writer
    writer.flush()
    log = read_boot(load_session(Path(result.path)).data, recorder.profile)
    checks = check_boot(claims, log, baud=baud)
    if wants_proc_cmdline(claims, checks):
        proc_cmdline = bench.run_after(result, PROC_CMDLINE)
        if proc_cmdline is not None:
            checks = check_boot(claims, log, proc_cmdline, baud)
    writer.meta(time.monotonic_ns() - writer.start_ns,
                verified=[check.to_json() for check in checks])
    return checks, log


def settle(state: ABState, variant: str, run: int, session: str, checks: Sequence[Check],
           log: BootLog, env: Mapping[str, str], source: ArgSource | None = None,
           board: str = "") -> None:
    """Mark a verified run done; or, when its boot contradicts its variant, mark it
    contradicted (left out of the statistics, booted again on resume) and stop the run.

    Args:
        state: the run's state.
        variant, run: the run booted.
        session: its session's file name.
        checks: its checks (`verify_boot`).
        log: its boot.
        env: the environment it was booted with.
        source: where the board's kernel arguments come from, when it was found before the
            run (with the boot file read); else it is found from `env` and the log.
        board: the board it ran on (kept in the state when several share the run).

    Raises:
        NotInForce: a check shows the opposite of its claim.
    """
    if not any(check.contradicted for check in checks):
        state.mark_done(variant, run, session, board)
        return
    state.mark_contradicted(variant, run, session)
    where = arguments_source(env, log, source)
    raise NotInForce(f"{contradiction_text(variant, run, checks, where)}. The boot ({session}) "
                     "is left out of the statistics; once the setting reaches the board, run "
                     "the same command again to boot it again")
