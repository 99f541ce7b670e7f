"""The file routes of a run, and the edit a port has outstanding.

When a board's kernel arguments come from a file the U-Boot environment cannot change, a run
edits that file for each boot: at the U-Boot prompt where U-Boot can write its file system
(`promptedit.PromptRoute`: no login needed), or from a logged-in Linux shell with
`--from-linux` (`fileedit.LinuxRoute`). Either keeps the original in the port's state file
(`sessions/edit-PORT.json`, its route recorded), so `restore_outstanding` puts the file back
the way it was edited, after a cancelled or crashed run, before anything else is done.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bootlab.control import promptedit
from bootlab.control.engine import Bench
from bootlab.control.linux import ShellError
from bootlab.control.linuxedit import FileEditError, LinuxRoute, reach_shell, restore
from bootlab.control.planning import RunPlan
from bootlab.core.board import fileedit
from bootlab.core.board.fileedit import EditState

Route = LinuxRoute | promptedit.PromptRoute


def open_route(bench: Bench, run: RunPlan) -> Route | None:
    """The file route the run's plan chose (None: no boot file is edited)."""
    source = run.source
    if run.route is None or source is None:
        return None
    port = str(bench.console.recorder.meta.get("port", ""))
    if run.route == "prompt":
        assert run.write is not None
        return promptedit.PromptRoute(bench, source, run.env, state_file_of(bench), port,
                                      bench.say, run.write)
    return LinuxRoute(bench.shell, source, state_file_of(bench), port, bench.say)


def restore_outstanding(bench: Bench, state_file: Path, say: Callable[[str], object],
                        why: str = "outstanding") -> bool:
    """Restore the edit a state file says is out, by the route that made it (at the U-Boot
    prompt, or logging in as needed); False when there is none. `why` says when:
    `outstanding` (from an earlier run), `the run is over`, `cancelled`.

    Raises:
        FileEditError: the state file is unreadable, or the restore failed.
        ShellError, UBootError, ConsoleTimeout: the board did not cooperate.
    """
    try:
        state = EditState.load(state_file)
    except ValueError as error:
        raise FileEditError(str(error)) from None
    if state is None:
        return False
    say(f"{state.path} on {state.uboot_device} is edited ({why}; {state_file.name}): "
        "restoring it")
    if state.route == "prompt":
        bench.to_bootloader()
        promptedit.restore(bench, state, state_file, say)
        return True
    reach_shell(bench)
    try:
        restore(bench.shell, state, state_file, say)
    except ShellError as error:
        raise FileEditError(f"restoring {state.path}: {error}") from None
    return True


def state_file_of(bench: Bench) -> Path:
    """The state file of the bench's port, in its sessions folder."""
    recorder = bench.console.recorder
    return fileedit.state_path(recorder.folder, str(recorder.meta.get("port", "")))
