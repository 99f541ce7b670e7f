"""The sessions screen over copies of the bundled boots: list, filter, baseline, relabel,
delete, replay, marks for comparison."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support.paths import EXAMPLES, example_sessions
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from bootlab.core.analysis import catalog
from bootlab.core.analysis.catalog import SessionSummary, summarize, summarize_folder
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.capture.session_index import index_path, session_index
from bootlab.core.files.state import load_state
from bootlab.session.replay import Player
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import listed_folder, live_app, replay_app
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.messages import BaselineChanged
from bootlab.ui.screens.compare import CompareScreen
from bootlab.ui.screens.dialogs import ConfirmDialog, TextDialog
from bootlab.ui.screens.sessions import SessionsScreen


def app_on(folder: Path) -> BootlabApp:
    return replay_app(sorted(folder.glob("*-default-*"))[0], speed=0.0, sessions=folder)


async def open_sessions(app: BootlabApp, pilot: Pilot[None]) -> SessionsScreen:
    await pilot.press("f2")
    screen = app.screen
    assert isinstance(screen, SessionsScreen)
    await wait_until(pilot, lambda: not screen.reading, "the sessions read")
    return screen


def row(screen: SessionsScreen, path: Path) -> list[str]:
    return [cell.plain for cell in screen.table.get_row(str(path))]


async def go_to(pilot: Pilot[None], screen: SessionsScreen, path: Path) -> None:
    screen.table.move_cursor(row=screen.table.get_row_index(str(path)))
    await pilot.pause()
    assert screen.current() == path


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_lists_every_session_with_its_key_times(folder: Path,
                                                      size: tuple[int, int]) -> None:
    seen: list[Message] = []
    app = app_on(folder)
    async with app.run_test(size=size, message_hook=seen.append) as pilot:
        screen = await open_sessions(app, pilot)
        paths = sorted(folder.glob("*.jsonl"), reverse=True)
        assert [Path(str(key.value)) for key in screen.table.rows] == paths
        quiet = next(p for p in paths if "-quiet-" in p.name)
        summary = summarize(quiet)
        cells = row(screen, quiet)
        assert cells[2] == "quiet" and cells[3] == "qemu-virt-a57"
        assert summary.total_s is not None and cells[4] == f"{summary.total_s:.2f}"
        assert cells[5:] == [f"{summary.milestones[m]:.2f}"
                             for m in ("starting_kernel", "init", "login")]
        assert f"sessions in {folder}" in str(screen.query_one("#sessions-title").render())
    assert any(isinstance(m, SessionsScreen.Loaded) for m in seen)  # read on the worker


async def test_filter_narrows_the_list_and_esc_goes_back(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        await pilot.press("slash", *"quiet")
        assert isinstance(app.focused, Input) and screen.table.row_count == 2
        await pilot.press("escape")  # out of the filter, which stays
        assert isinstance(app.focused, DataTable) and screen.table.row_count == 2
        await pilot.press("slash", "ctrl+u", *"nothing-like-it", "enter")
        assert screen.table.row_count == 0 and screen.current() is None
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen) and len(app.screen_stack) == 1


async def test_baseline_is_remembered_and_sent_to_the_main_screen(folder: Path) -> None:
    seen: list[Message] = []
    app = app_on(folder)
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        screen = await open_sessions(app, pilot)
        quiet = sorted(folder.glob("*-quiet-*"))[0]
        await go_to(pilot, screen, quiet)
        await pilot.press("b")
        assert load_state().baseline(folder) == quiet and screen.baseline == quiet
        assert row(screen, quiet)[0].endswith("B")
        assert [m.session for m in seen if isinstance(m, BaselineChanged)] == [quiet]
        await pilot.press("b")  # again: no baseline
        assert load_state().baseline(folder) is None and not row(screen, quiet)[0].strip()
        assert [m.session for m in seen if isinstance(m, BaselineChanged)] == [quiet, None]


async def test_relabel_appends_a_meta_record(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        target = sorted(folder.glob("*-bootdelay0-*"))[0]
        before = target.read_bytes()
        await go_to(pilot, screen, target)
        await pilot.press("r")
        assert isinstance(app.screen, TextDialog)
        await pilot.press("ctrl+u", *"fast-boot", "enter")
        await wait_until(pilot, lambda: row(screen, target)[2] == "fast-boot", "the new label")
        assert target.read_bytes().startswith(before)
        last = json.loads(target.read_text().splitlines()[-1])
        assert last["meta"] == {"label": "fast-boot"} and isinstance(last["t"], int)
        assert load_session(target).label == "fast-boot"
        await pilot.press("r", "escape")  # cancelled: nothing written
        assert not isinstance(app.screen, TextDialog)
        assert load_session(target).label == "fast-boot"


async def test_delete_asks_first(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        target = sorted(folder.glob("*-quiet-*"))[1]
        session_index(target, cache=True)  # an index kept beside it goes with it
        await go_to(pilot, screen, target)
        await pilot.press("b", "delete")
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")
        assert target.exists() and screen.table.row_count == 6
        await pilot.press("delete", "y")
        assert not target.exists() and not index_path(target).exists()
        assert screen.table.row_count == 5
        assert str(target) not in screen.table.rows
        assert screen.baseline is None and load_state().baseline(folder) is None


async def test_enter_replays_the_session_and_esc_comes_back(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        target = sorted(folder.glob("*-quiet-*"))[0]
        await go_to(pilot, screen, target)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), "the replay")
        replay = app.screen
        assert isinstance(replay, MainScreen) and isinstance(replay.source, Player)
        assert replay.source.path == target and replay is not main_screen(app)
        await wait_until(pilot, lambda: replay.status.state.startswith("ended"), "the replay's end")
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), "the replay")
        await pilot.press("f2")  # back to the one sessions screen, not a second one
        assert app.screen is screen and len(app.screen_stack) == 2


async def test_marks_pick_the_sessions_to_compare(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        await pilot.press("c")  # nothing marked yet
        assert app.screen is screen
        await pilot.press("space", "space")
        newest = sorted(folder.glob("*.jsonl"), reverse=True)[:2]
        assert screen.marked_paths() == sorted(newest)
        assert row(screen, newest[0])[0].startswith("✓")
        await pilot.press("c")
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.paths == sorted(newest)
        await pilot.press("escape", "slash", *"default", "enter", "a")
        assert len(screen.marked) == 4
        await pilot.press("a")  # all shown are marked: unmark them
        assert screen.marked_paths() == sorted(newest)


async def test_a_cut_off_file_is_listed_with_what_is_wrong(folder: Path) -> None:
    broken = folder / "20990101-000000-broken-01.jsonl"
    broken.write_bytes(next(folder.glob("*.jsonl")).read_bytes()[:400])
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        assert screen.table.row_count == 7
        await go_to(pilot, screen, broken)
        assert row(screen, broken)[4:] == ["-"] * 4
        detail = str(screen.query_one("#sessions-detail").render())
        assert broken.name in detail and "cut off" in detail


async def test_new_files_show_when_the_screen_comes_back(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        before = dict(screen.summaries)
        copy = folder / "20991231-235959-later-01.jsonl"
        shutil.copy(sorted(folder.glob("*-quiet-*"))[0], copy)
        await pilot.press("question_mark", "escape")  # the help over it, then back
        await wait_until(pilot, lambda: str(copy) in screen.table.rows, "the new file")
        assert screen.table.row_count == 7
        assert all(screen.summaries[path] is summary for path, summary in before.items())


async def test_summaries_are_kept_for_the_next_sessions_screen(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        before = dict(screen.summaries)
        await pilot.press("escape", "f2")
        again = app.screen
        assert isinstance(again, SessionsScreen) and again is not screen
        assert again.summaries == before  # listed at once, before any file is read
        await wait_until(pilot, lambda: not again.reading, "the sessions read")
        assert all(again.summaries[path] is summary for path, summary in before.items())


def test_a_file_being_recorded_is_analysed_once(folder: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    known = {summary.path: (stamp, summary)
             for summary, stamp in summarize_folder(folder, {}, set())}
    growing, changed = sorted(known)[:2]
    for path in (growing, changed):
        stamp = path.stat().st_mtime_ns + 1_000_000_000
        os.utime(path, ns=(stamp, stamp))
    analysed: list[Path] = []
    monkeypatch.setattr(catalog, "summarize",
                        lambda path, *_: analysed.append(path) or SessionSummary(path))
    read = {summary.path: (stamp, summary)
            for summary, stamp in summarize_folder(folder, known, {growing})}
    assert analysed == [changed]
    assert read[growing] == known[growing] and read.keys() == known.keys()
    # recorded: its stamp (as read) differs from the file's, so the next reading reads it
    assert list(summarize_folder(folder, read, set())) and analysed == [changed, growing]


async def test_the_session_being_recorded_cannot_be_deleted(folder: Path,
                                                           pty_pair: Pty) -> None:
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), folder)
    notes: list[Message] = []
    async with app.run_test(size=(80, 24), message_hook=notes.append) as pilot:
        live = main_screen(app)
        await wait_until(pilot, lambda: live.status.recording is not None, "the recording")
        recording = folder / str(live.status.recording)
        pty_pair.write(load_session(example_sessions()[0]).data[:2000])
        await pilot.press("f2")  # from the live console too
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_until(pilot, lambda: str(recording) in screen.table.rows, "the new file")
        await go_to(pilot, screen, recording)
        assert "being recorded" in str(screen.query_one("#sessions-detail").render())
        await pilot.press("delete")
        assert not isinstance(app.screen, ConfirmDialog) and recording.exists()
    link.wait_closed()
    assert any(isinstance(m, Notify) and "being recorded" in m.notification.message
               for m in notes)


def test_without_arguments_an_empty_folder_lists_the_bundled_examples(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert listed_folder(None) == EXAMPLES
    (tmp_path / "sessions").mkdir()
    shutil.copy(example_sessions()[0], tmp_path / "sessions")
    assert listed_folder(None) == Path("sessions")
    assert listed_folder(tmp_path / "elsewhere") == tmp_path / "elsewhere"


async def test_the_screens_are_in_the_palette(folder: Path) -> None:
    app = app_on(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["view: Sessions"].callback()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        own = {c.title for c in app.get_system_commands(screen)}
        assert {"sessions: Replay", "sessions: Set or clear the baseline",
                "sessions: Relabel", "sessions: Delete", "view: Compare"} <= own
        commands["view: Compare"].callback()
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        assert "compare: Waterfall" in {c.title for c in app.get_system_commands(app.screen)}


async def test_an_empty_folder_says_how_to_fill_it(tmp_path: Path) -> None:
    app = replay_app(example_sessions()[0], speed=0.0, sessions=tmp_path / "none")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(app, pilot)
        detail = str(screen.query_one("#sessions-detail").render())
        assert "no sessions in" in detail and "bootlab record PORT" in detail

