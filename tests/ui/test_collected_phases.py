"""A boot's dmesg collected after its goal (`--collect`) in the app: the milestones it adds
show in the phase pane marked as the command line marks them, the boot's note (joined, or why
not) under the panes, in a replay and when the app's own board job collected it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import pytest
from support.board_bench import Bench, job_done, mark, open_bench
from support.paths import example_sessions
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from test_collected import session as collected_session
from textual.widgets import Checkbox

from bootlab.commands.parsers import build_console_parser
from bootlab.core.analysis.loading import load
from bootlab.core.analysis.phases import Boot, Milestone
from bootlab.core.render.tables import shown_name
from bootlab.ui.launch import login_of, replay_app
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.messages import Collected, ReplayRewound
from bootlab.ui.screens.board_dialogs import ApplyDialog
from bootlab.ui.widgets.note_line import NoteLine
from bootlab.ui.widgets.phase_panel import PhasePanel


def from_dmesg(milestones: Iterable[Milestone]) -> list[str]:
    """The ids of the milestones a collected dmesg placed, in order."""
    return [m.id for m in milestones if m.source == "dmesg"]


def shown_dmesg(screen: MainScreen) -> list[str]:
    return from_dmesg([row.milestone for row in screen.boot_state.rows])


def milestone_cells(screen: MainScreen) -> list[str]:
    panel = screen.query_one(PhasePanel)
    return [panel.get_cell(key, "milestone").plain for key in panel.rows]


def assert_shows(screen: MainScreen, boot: Boot) -> None:
    """The pane shows the boot's dmesg milestones, marked, and the note shows its text."""
    assert shown_dmesg(screen) == from_dmesg(boot.milestones)
    marked = [cell for cell in milestone_cells(screen) if "(dmesg" in cell]
    assert len(marked) == len(from_dmesg(boot.milestones))
    assert screen.query_one(NoteLine).note == boot.collected


async def test_a_replay_shows_what_its_collected_dmesg_adds_marked(tmp_path: Path) -> None:
    path = collected_session(tmp_path)
    boot = load(path).analysis.boots[-1]
    added = [m for m in boot.milestones if m.source == "dmesg"]
    assert added and boot.collected                   # the session's dmesg joins
    app = replay_app(path, speed=0.0)
    seen: list[object] = []
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: shown_dmesg(screen), "the dmesg rows")
        assert_shows(screen, boot)
        # The command line's mark, via its helper (`init (dmesg ±4.9 ms)`); where a name
        # does not fit, the mark's end goes first (`calibrate (dmesg…`), the id stays.
        cells = milestone_cells(screen)
        assert shown_name(added[-1]) in cells
        assert all(any(cell.startswith(f"{m.id} (dmesg") for cell in cells) for m in added)
        note = screen.query_one(NoteLine)
        await wait_until(pilot, lambda: note.size.height == 1, "the note laid out")
        assert note.display and note.outer_size.width == 80
        screen.query_one(PhasePanel).focus()         # in full while the phases have the focus
        await wait_until(pilot, lambda: note.size.height > 1, "the whole note")
        assert note.has_class("-full")
        # Seeking back plays the boot again (at once): the dmesg joins again once passed.
        screen.console.focus()
        await pilot.press("home")
        await wait_until(pilot, lambda: any(isinstance(m, ReplayRewound) for m in seen),
                         "the seek back")
        await wait_until(pilot, lambda: sum(isinstance(m, Collected) for m in seen) == 2,
                         "the dmesg joined again")
        await wait_until(pilot, lambda: shown_dmesg(screen), "the dmesg rows again")
        assert_shows(screen, boot)


async def test_a_replay_without_collected_dmesg_shows_no_note() -> None:
    app = replay_app(example_sessions("quiet")[0], speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the end")
        assert not screen.query_one(NoteLine).display
        assert shown_dmesg(screen) == []


@pytest.fixture
async def bench(pty_pair: Pty, tmp_path: Path) -> AsyncIterator[Bench]:
    async with open_bench(pty_pair, tmp_path) as opened:
        opened.link.collect = True                    # as `bootlab PORT --user ...` sets it
        yield opened


async def test_apply_and_boot_collects_the_dmesg_into_the_phase_pane(bench: Bench) -> None:
    screen, pilot, board = bench.screen, bench.pilot, bench.board
    await mark(bench, "q")                            # a quiet boot: the kernel lines go
    await pilot.press("P")
    dialog = bench.app.screen
    assert isinstance(dialog, ApplyDialog)
    assert dialog.query_one("#apply-collect", Checkbox).value   # a login was given
    await pilot.press("enter")
    await job_done(bench)
    # Through the engine as `bootlab boot --collect`: logged in, synced, read dmesg.
    assert any(command.startswith("dmesg | gzip -c | base64") for command in board.shell_commands)
    assert sum("/dev/kmsg" in command for command in board.shell_commands) == 2
    await wait_until(pilot, lambda: any(isinstance(m, Collected) for m in bench.seen),
                     "the collected dmesg")
    (posted,) = [m.event for m in bench.seen if isinstance(m, Collected)]
    boot = load(bench.folder / posted.session).analysis.boots[-1]
    assert boot.collected and posted.boot.collected == boot.collected
    await wait_until(pilot, lambda: screen.query_one(NoteLine).note is not None, "the note")
    assert_shows(screen, boot)


async def test_a_boot_without_collect_reads_no_dmesg(bench: Bench) -> None:
    pilot = bench.pilot
    await mark(bench, "q")
    await pilot.press("P")
    dialog = bench.app.screen
    assert isinstance(dialog, ApplyDialog)
    dialog.query_one("#apply-collect", Checkbox).value = False
    await pilot.press("enter")
    await job_done(bench)
    assert not any("dmesg" in command for command in bench.board.shell_commands)
    assert not any(isinstance(m, Collected) for m in bench.seen)
    assert not bench.screen.query_one(NoteLine).display


@pytest.mark.parametrize(("argv", "user", "password", "collect"), [
    ([], "root", None, False),                        # no login given: offered off
    (["--password", "pw"], "root", "pw", True),
    (["--user", "pi"], "pi", None, True),
    (["--user", "pi", "--no-collect"], "pi", None, False),
    (["--collect"], "root", None, True),
])
def test_the_app_collects_by_default_where_a_login_is_given(
        argv: list[str], user: str, password: str | None, collect: bool) -> None:
    credentials, on = login_of(build_console_parser().parse_args(["/dev/ttyUSB7", *argv]))
    assert (credentials.user, credentials.password, on) == (user, password, collect)


async def test_the_note_says_uboots_stages_and_systemds_record(tmp_path: Path) -> None:
    """A boot with U-Boot's bootstage read before `boot` and systemd's record after login: the
    note under the panes gives the stages' steps and the record after what the dmesg added."""
    import json

    from test_bootstage import KEPT, event
    from test_systemd_units import KEPT as READS
    from test_systemd_units import event as record

    path = collected_session(tmp_path)
    last_t = json.loads(path.read_text().splitlines()[-1]).get("t", 0)
    with path.open("a") as file:
        file.write(json.dumps({**event(KEPT), "t": last_t}) + "\n")
        file.write(json.dumps({**record(READS), "t": last_t}) + "\n")
    boot = load(path).analysis.boots[-1]
    assert boot.bootstage is not None and boot.bootstage.placed and boot.collected
    app = replay_app(path, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = main_screen(app)
        note = screen.query_one(NoteLine)
        await wait_until(pilot, lambda: note.note is not None and "bootstage" in note.note,
                         "the note with U-Boot's stages")
        assert note.note is not None and note.note.startswith(boot.collected)
        assert "U-Boot's stages (bootstage, s on its timer): board_init_f +0.030" \
            in note.note and "placed within ±" in note.note
        assert "systemd's record, read after login: 9 units" in note.note


async def test_user_space_is_folded_in_the_phase_pane_and_enter_opens_it(
        tmp_path: Path) -> None:
    """systemd's record, placed: the pane folds user space in one row; Enter on it lists
    the critical chain from its first unit, each ready on the pane's axis."""
    import json

    from test_systemd_units import KEPT, event

    from bootlab.ui.widgets.phase_panel import UNIT_ROW, USER_SPACE_ROW

    path = collected_session(tmp_path)
    last_t = json.loads(path.read_text().splitlines()[-1]).get("t", 0)
    with path.open("a") as file:
        file.write(json.dumps({**event(KEPT), "t": last_t}) + "\n")
    boot = load(path).analysis.boots[-1]
    assert boot.systemd is not None and boot.systemd.placed
    chain = [u.name for u in reversed(boot.systemd.chain)]
    app = replay_app(path, speed=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = main_screen(app)
        panel = screen.query_one(PhasePanel)
        await wait_until(pilot, lambda: USER_SPACE_ROW in panel.rows, "the user-space row")
        cell = panel.get_cell(USER_SPACE_ROW, "milestone").plain
        assert cell == f"▸ user space ({len(chain)})"
        assert not any(str(key.value).startswith(UNIT_ROW) for key in panel.rows)
        panel.focus()
        panel.move_cursor(row=panel.get_row_index(USER_SPACE_ROW))
        await pilot.press("enter")
        await wait_until(pilot, lambda: sum(str(k.value).startswith(UNIT_ROW)
                                            for k in panel.rows) == len(chain),
                         "the chain's rows")
        shown = [str(k.value).removeprefix(UNIT_ROW) for k in panel.rows
                 if str(k.value).startswith(UNIT_ROW)]
        assert shown == chain
        assert panel.get_cell(USER_SPACE_ROW, "milestone").plain.startswith("▾ user space")
        app_row = UNIT_ROW + "slow-app.service"
        assert panel.get_cell(app_row, "duration").plain == "3.300"
        await pilot.press("enter")                    # the cursor is still on it: fold again
        await wait_until(pilot, lambda: not any(str(k.value).startswith(UNIT_ROW)
                                                for k in panel.rows), "user space folded")
