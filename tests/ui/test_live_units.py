"""User space in the phase pane as the boot prints it: systemd's status lines fold into the
`user space` row while the boot runs, before (and without) anything collected after it; Enter
lists the slowest units so far, as `bootlab analyze` lists them from the same lines."""

from __future__ import annotations

from pathlib import Path

from support.lab3_log import lab3_session
from support.pilot import main_screen, wait_until

from bootlab.core.analysis.loading import load
from bootlab.core.render.userspace import host_spans
from bootlab.ui.launch import replay_app
from bootlab.ui.widgets.phase_panel import UNIT_ROW, USER_SPACE_ROW, PhasePanel


def unit_keys(panel: PhasePanel) -> list[str]:
    return [str(k.value).removeprefix(UNIT_ROW) for k in panel.rows
            if str(k.value).startswith(UNIT_ROW)]


async def test_status_lines_fold_into_user_space_as_they_arrive(tmp_path: Path) -> None:
    path = lab3_session(tmp_path)
    boot = load(path).analysis.boots[-1]
    slowest = [name for name, _, _ in host_spans(boot)]
    assert boot.systemd is None and len(slowest) == 10    # nothing collected: the lines only
    app = replay_app(path, speed=8.0)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = main_screen(app)
        panel = screen.query_one(PhasePanel)
        # while the boot still plays, user space is there already, and grows
        await wait_until(pilot, lambda: USER_SPACE_ROW in panel.rows, "the user-space row",
                         timeout_s=60)
        assert not screen.status.state.startswith("ended")
        await wait_until(pilot, lambda: screen.status.state.startswith("ended"), "the end",
                         timeout_s=60)
        await pilot.pause()
        assert panel.get_cell(USER_SPACE_ROW, "milestone").plain == \
            f"▸ user space ({len(slowest)})"
        panel.focus()
        panel.move_cursor(row=panel.get_row_index(USER_SPACE_ROW))
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(unit_keys(panel)) == len(slowest), "the units")
        assert unit_keys(panel) == slowest
