"""The phase pane's extras: differences to a baseline session, budget marks, user milestones."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.style import Style
from support.paths import EXAMPLES, example_sessions
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot

from bootlab.core.analysis.phases import phase_rows
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.sources import open_source
from bootlab.core.files.config import config_dir
from bootlab.core.files.state import AppState, load_state, save_state
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import live_app, replay_app
from bootlab.ui.messages import BaselineChanged
from bootlab.ui.widgets.phase_panel import GOAL_MARK, MIN_BAR, TICK, PhasePanel

DEFAULT = example_sessions("default")[0]
QUIET = example_sessions("quiet")[0]


def first_elapsed(path: Path) -> dict[str, float]:
    source = open_source(path)
    boot = analyze(source.data, load_profile("linux"), source.line_time).boots[0]
    times: dict[str, float] = {}
    for row in phase_rows(boot):
        assert row.elapsed_s is not None
        times.setdefault(row.milestone.id, row.elapsed_s)
    return times


def panel_of(app: BootlabApp) -> PhasePanel:
    return main_screen(app).query_one(PhasePanel)


def column_keys(panel: PhasePanel) -> list[str]:
    return [str(key.value) for key in panel.columns]


def cells(panel: PhasePanel, column: str) -> dict[str, str]:
    """Milestone id -> the text shown in `column`, for every row."""
    shown = {}
    for row_key in panel.rows:
        milestone = panel.get_cell(row_key, "milestone").plain
        milestone = milestone.removesuffix(f" {GOAL_MARK}").rstrip("*")
        shown[milestone] = panel.get_cell(row_key, column).plain
    return shown


def colour_of(panel: PhasePanel, component: str) -> Style:
    return panel.get_component_rich_style(component, partial=True)


async def play_to_end(app: BootlabApp, pilot: Pilot[None]) -> None:
    await wait_until(pilot, lambda: main_screen(app).status.state.startswith("ended"),
                     "the replay end")
    main_screen(app).console.flush()
    await pilot.pause()


def choose_baseline(session: Path) -> None:
    state = AppState()
    state.set_baseline(EXAMPLES, session)
    save_state(state)


async def test_each_milestone_is_compared_with_the_remembered_baseline() -> None:
    # GIVEN the quiet boot remembered as the baseline of the examples folder
    choose_baseline(QUIET)
    mine, base = first_elapsed(DEFAULT), first_elapsed(QUIET)
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(app, pilot)
        panel = panel_of(app)
        await wait_until(pilot, lambda: "base" in column_keys(panel), "the baseline")
        # THEN every milestone of both boots shows the signed difference, coloured by sign
        shown = cells(panel, "base")
        for milestone, elapsed in mine.items():
            if milestone in base:
                difference = round(elapsed - base[milestone], 3)
                assert shown[milestone] == ("±0.000" if difference == 0
                                            else f"{difference:+.3f}"), milestone
            else:
                assert shown[milestone] == "-"
        assert shown["starting_kernel"] == "+0.125" and shown["bootloader"] == "-0.002"
        assert str(panel.border_subtitle) == f"vs {QUIET.stem}"
        worse = panel.get_cell(f"1:starting_kernel:{row_line(panel, 'starting_kernel')}", "base")
        better = panel.get_cell(f"1:bootloader:{row_line(panel, 'bootloader')}", "base")
        assert worse.style == colour_of(panel, "phasepanel--worse")
        assert better.style == colour_of(panel, "phasepanel--better")
        assert worse.style != better.style


def row_line(panel: PhasePanel, milestone: str) -> int:
    return next(int(str(key.value).rsplit(":", 1)[1]) for key in panel.rows
                if str(key.value).split(":")[1] == milestone)


async def test_a_baseline_changed_message_loads_the_new_one_and_none_clears_it() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(app, pilot)
        panel = panel_of(app)
        assert "base" not in column_keys(panel) and not panel.border_subtitle
        main_screen(app).post_message(BaselineChanged(QUIET))
        await wait_until(pilot, lambda: "base" in column_keys(panel), "the baseline")
        assert cells(panel, "base")["login"] == "+0.257"
        main_screen(app).post_message(BaselineChanged(None))
        await wait_until(pilot, lambda: "base" not in column_keys(panel), "no baseline")
        assert not panel.border_subtitle


async def test_this_boot_becomes_the_baseline_from_the_palette() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(app, pilot)
        commands = {c.title: c for c in main_screen(app).system_commands()}
        assert "phases: Clear the baseline" not in commands
        commands["phases: Use this boot as the baseline"].callback()
        panel = panel_of(app)
        await wait_until(pilot, lambda: "base" in column_keys(panel), "the baseline")
        assert set(cells(panel, "base").values()) == {"±0.000"}
        assert load_state().baseline(EXAMPLES) == EXAMPLES / DEFAULT.name
        commands = {c.title: c for c in main_screen(app).system_commands()}
        commands["phases: Clear the baseline"].callback()
        await wait_until(pilot, lambda: "base" not in column_keys(panel), "no baseline")
        assert load_state().baseline(EXAMPLES) is None


def write_budgets(text: str) -> Path:
    path = config_dir() / "budgets.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def test_budgets_are_marked_pass_or_fail_with_a_tick_at_the_limit() -> None:
    mine = first_elapsed(DEFAULT)
    assert mine["init"] < 4.8 < mine["login"] < 6.0 and mine["kernel_done"] > 4.0
    write_budgets('[budgets]\ninit = 4.8\nkernel_done = "4s"\nlogin = 6.0\n'
                  'network_up = 5.0\n"probe:mem.used_kb" = 30000\n')
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(app, pilot)
        panel = panel_of(app)
        await wait_until(pilot, lambda: "budget" in column_keys(panel), "the budgets")
        marks = cells(panel, "budget")
        assert marks["init"] == "✓" and marks["login"] == "✓" and marks["kernel_done"] == "✗"
        assert marks["network_up"] == "✗"  # never reached, and the boot went past 5 s
        assert {v for k, v in marks.items() if k not in
                ("init", "login", "kernel_done", "network_up")} == {""}
        assert cells(panel, "elapsed")["network_up"] == "-"
        bars = cells(panel, "bar")
        width = len(bars["init"])
        end = axis_end(app)
        assert bars["init"].index(TICK) == int(4.8 / end * width)
        assert bars["kernel_done"].index(TICK) == int(4.0 / end * width)
        assert bars["network_up"].strip() == TICK
        assert TICK not in bars["login"]  # 6 s lies beyond the axis (the boot's 5.5 s)
        assert TICK not in bars["linux"]
        passed = panel.get_cell(f"1:init:{row_line(panel, 'init')}", "budget")
        assert passed.style == colour_of(panel, "phasepanel--pass")
        failed = panel.get_cell(f"1:kernel_done:{row_line(panel, 'kernel_done')}", "budget")
        assert failed.style == colour_of(panel, "phasepanel--over")


def axis_end(app: BootlabApp) -> float:
    boot_state = main_screen(app).boot_state
    end = boot_state.since_reference(boot_state.newest_line_s)
    assert end is not None
    return max(end, *(r.elapsed_s + (r.duration_s or 0.0) for r in boot_state.rows
                      if r.elapsed_s is not None))


async def test_a_budget_fails_while_running_once_its_time_has_passed() -> None:
    write_budgets("[budgets]\nlogin = 0.4\n")
    app = replay_app(DEFAULT, speed=1.0)
    async with app.run_test(size=(160, 48)) as pilot:
        panel = panel_of(app)
        await wait_until(pilot, lambda: "budget:login" in [str(k.value) for k in panel.rows],
                         "the late login row")
        assert "login" not in [row.milestone.id for row in main_screen(app).boot_state.rows]
        assert cells(panel, "budget")["login"] == "✗"
        assert (main_screen(app).source.clock_s() or 0.0) > 0.4


async def test_a_bad_budget_file_is_a_notification_naming_file_and_line() -> None:
    path = write_budgets('[budgets]\nlogin = 5.0\ninit = "soon"\n')
    seen: list[Message] = []
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await play_to_end(app, pilot)
        assert "budget" not in column_keys(panel_of(app))
    notes = [m.notification for m in seen if isinstance(m, Notify)]
    assert any(n.title == "budgets" and n.severity == "error" and f"{path}:3:" in n.message
               for n in notes)


async def test_narrow_panes_keep_the_bar_by_leaving_columns_out() -> None:
    choose_baseline(QUIET)
    write_budgets("[budgets]\nlogin = 6.0\n")
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await play_to_end(app, pilot)
        panel = panel_of(app)
        await wait_until(pilot, lambda: "base" in column_keys(panel), "the baseline")
        keys = column_keys(panel)
        assert keys[:2] == ["milestone", "elapsed"] and {"budget", "base", "bar"} <= set(keys)
        assert "delta" not in keys
        width = sum(c.get_render_width(panel) for c in panel.columns.values())
        assert width <= panel.size.width and panel.columns[list(panel.columns)[-1]].width \
            >= MIN_BAR


@pytest.mark.parametrize(("search", "stage"), [("crng init", "kernel"), (None, ""),
                                               ("S10hello", "userspace")])
async def test_the_mark_key_adds_the_line_to_the_user_profile_and_the_pane(
        search: str | None, stage: str) -> None:
    """A marked line joins the profile in its boot stage: a service's line after an
    initramfs mounted the root (a kernel message after init) is user space."""
    seen: list[Message] = []
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await play_to_end(app, pilot)
        screen = main_screen(app)
        if search is None:  # the newest line, the login prompt, is a milestone already
            await pilot.press("u")
            notes = [m.notification for m in seen if isinstance(m, Notify)]
            assert any("already milestone 'login'" in n.message for n in notes)
            assert not (config_dir() / "profiles").exists()
            return
        await pilot.press("slash", *search, "enter", "u")
        row = screen.console.match_row
        assert row is not None
        line = screen.console.lines[row]
        panel = panel_of(app)
        ident = next(m for m in cells(panel, "milestone") if m not in load_profile("linux").by_id)
        elapsed = cells(panel, "elapsed")[ident]
        start = main_screen(app).boot_state.references[1][1]
        assert line.host_s is not None
        assert elapsed == f"{line.host_s - start:.3f}"
    profile = load_profile("linux", [config_dir() / "profiles"])
    marked = [m for m in profile.markers if m.id not in load_profile("linux").by_id]
    assert [m.stage for m in marked] == [stage], marked


async def test_ctrl_t_u_marks_the_newest_line_of_a_live_console(pty_pair: Pty,
                                                                tmp_path: Path) -> None:
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = main_screen(app)
        await wait_until(pilot, lambda: screen.status.state == "connected", "the port to open")
        pty_pair.write(b"U-Boot 2023.01 (Jan 01 2023)\r\nbench app: ready in 12 ms\r\n")
        await wait_until(pilot, lambda: screen.console.line_count == 2, "the lines")
        await pilot.press("ctrl+t", "u")
        await wait_until(pilot, lambda: "bench_app_ready" in
                         [row.milestone.id for row in screen.boot_state.rows], "the new milestone")
        # the same line in the next boot is found too, by the marks of this run
        pty_pair.write(b"U-Boot 2023.01 (Jan 01 2023)\r\nbench app: ready in 9 ms\r\n")
        await wait_until(pilot, lambda: screen.boot_state.boot is not None
                         and screen.boot_state.boot.index == 2
                         and "bench_app_ready" in [r.milestone.id for r in screen.boot_state.rows],
                         "the milestone in the second boot")
        await pilot.press("ctrl+t", "q")
    assert link.wait_closed()


def test_silent_firmware_before_the_first_line_is_said_not_timed() -> None:
    from bootlab.session.boot_state import BootState
    from bootlab.session.events import BootSnapshot

    profile = load_profile("linux")
    # a board whose first byte is U-Boot's banner: ROM and SPL printed nothing
    banner_first = analyze(b"U-Boot 2020.01 (Jan 06 2020 - 10:00:00 +0000)\nStarting kernel ...\n",
                           profile).boots[0]
    boot_state = BootState(profile)
    boot_state.update(BootSnapshot.of(banner_first))
    assert boot_state.marks(None).note == "firmware before bootloader silent: not timed"
    # the ROM's own line first: nothing to say
    with_rom = analyze(b"DDR Version 1.25 20210517\nU-Boot 2020.01 (Jan 06 2020 - 10:00)\n",
                       profile).boots[0]
    boot_state.update(BootSnapshot.of(with_rom))
    assert boot_state.marks(None).note == ""
