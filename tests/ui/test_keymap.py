"""Keys: every binding has an id; config.toml remaps them and the Ctrl-T escapes; the help
shows the keys in force; a bad config is a notification; the chosen theme is remembered."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from support.paths import example_sessions
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from textual.command import CommandPalette
from textual.message import Message
from textual.notifications import Notify

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.files.appconfig import config_path
from bootlab.core.files.state import load_state
from bootlab.ui.app import BootlabApp
from bootlab.ui.keys import ESCAPE_ACTIONS, apply_escape_keys
from bootlab.ui.launch import live_app, replay_app
from bootlab.ui.screens.compare import CompareScreen
from bootlab.ui.screens.help import HelpScreen, KeyTable, bound_classes, own_bindings
from bootlab.ui.screens.sessions import SessionsScreen
from bootlab.ui.widgets.console import ConsoleView

DEFAULT = example_sessions("default")[0]


@pytest.fixture(autouse=True)
def _default_escapes() -> Iterator[None]:
    """The escape table is the app's; leave the defaults for the next test."""
    yield
    apply_escape_keys({})


def write_config(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def help_text(app: BootlabApp) -> str:
    assert isinstance(app.screen, HelpScreen)
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#help-keys", KeyTable).table)
    return console.export_text()


def notifications(seen: list[Message]) -> str:
    return "\n".join(m.notification.message for m in seen if isinstance(m, Notify))


def test_every_binding_has_an_id() -> None:
    bindings = [(cls.__name__, b) for cls in bound_classes() for b in own_bindings(cls)]
    names = {name for name, _ in bindings}
    assert {"BootlabApp", "MainScreen", "SessionsScreen", "CompareScreen", "HelpScreen",
            "LogView"} <= names
    assert [(name, b.key) for name, b in bindings if not b.id] == []


async def test_config_keys_replace_the_defaults_everywhere() -> None:
    write_config('[keys]\nsessions = "f5"\ncycle-time = "M"\n')
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        console = main_screen(app).console
        await pilot.press("m")
        assert console.time_mode == "elapsed"
        await pilot.press("M")
        assert console.time_mode == "delta"
        await pilot.press("f2")
        assert not isinstance(app.screen, SessionsScreen)
        await pilot.press("f5")
        assert isinstance(app.screen, SessionsScreen)
        await pilot.press("escape", "question_mark")
        shown = help_text(app)
        assert "f5  sessions" in shown and "M  time column" in shown
        assert "sessions  f5" in shown and "cycle-time  M" in shown  # the ids list
        assert "f2  " not in shown


async def test_help_lists_the_keys_of_every_screen_and_every_id() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        shown = help_text(app)
        for cls in bound_classes():
            for binding in own_bindings(cls):
                assert f"{binding.id}  " in shown, binding.id
        for heading in ("Anywhere", "Sessions screen (F2)", "Compare screen (F3)",
                        "Console, live: keys go to the board; Ctrl-T then"):
            assert heading in shown
        assert "[  replay: 5 s back" in shown and "home  replay: back to the start" in shown
        await pilot.press("escape", "f2")
        await pilot.press("question_mark")
        first = help_text(app).split("\n\n")[0]
        assert "Sessions screen (F2)" in first and "mark or unmark" in first


async def test_the_help_renders_its_table_once_and_scrolls_through_it() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        box = app.screen.query_one(KeyTable)
        assert KeyTable.rendered is not None
        lines = KeyTable.rendered[1]
        assert box.virtual_size.height == len(lines) > box.scrollable_content_region.height
        assert all(line.cell_length <= box.scrollable_content_region.width for line in lines)
        await pilot.press("end")
        await pilot.pause()
        assert box.scroll_y == box.max_scroll_y > 0
        last = box.render_line(box.scrollable_content_region.height - 1).text
        assert last.strip() == lines[-1].text.strip()
        await pilot.press("escape", "question_mark")  # opened again: the lines kept are drawn
        await pilot.pause()
        assert KeyTable.rendered[1] is lines
        assert app.screen.query_one(KeyTable).render_line(0).text.strip() == \
            lines[0].text.strip()


async def test_a_bad_config_is_a_notification_and_the_defaults_stay() -> None:
    write_config('[keys]\nsessions = "f5"\n[keys]\n')
    seen: list[Message] = []
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await pilot.press("f2")
        assert isinstance(app.screen, SessionsScreen)
    said = notifications(seen)
    assert f"{config_path()}:3: not valid TOML" in said and "default keys" in said


async def test_unknown_ids_and_clashing_escapes_are_named_with_their_lines() -> None:
    write_config('[keys]\nsessions = "f5"\nno-such-thing = "f6"\n\n[escape]\n'
                 'compare = "s"\nwhatever = "w"\n')
    seen: list[Message] = []
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await pilot.press("f5")
        assert isinstance(app.screen, SessionsScreen)
    said = notifications(seen)
    assert f"{config_path()}:3: [keys] no-such-thing: no key binding has this id" in said
    assert f"{config_path()}:7: [escape] no Ctrl-T escape is called 'whatever'" in said
    assert f"{config_path()}:6: [escape] Ctrl-T s was 'sessions screen'" in said
    assert ESCAPE_ACTIONS["s"][0] == "app.compare"


async def test_ctrl_t_escapes_reach_the_screens_from_the_live_console(
        pty_pair: Pty, tmp_path: Path) -> None:
    write_config('[escape]\nsessions = "S"\n')
    seen: list[Message] = []
    app, link = live_app(pty_pair.name, 115200, load_profile("linux"), tmp_path)
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        live = main_screen(app)
        await wait_until(pilot, lambda: live.status.recording is not None, "the port")
        assert isinstance(app.focused, ConsoleView) and app.focused.live
        await pilot.press("ctrl+t", "s")  # moved to S: now it means nothing
        assert app.screen is live
        await pilot.press("ctrl+t", "S")
        assert isinstance(app.screen, SessionsScreen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is live, "back on the live console")
        await pilot.press("ctrl+t", "c")
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("escape")
        await pilot.press("ctrl+t", "question_mark")
        assert "S  sessions screen" in help_text(app)
    link.wait_closed()
    assert "Ctrl-T s means nothing" in notifications(seen)


async def test_the_chosen_theme_is_remembered() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "bootlab-dark" and load_state().theme is None
        app.theme = "bootlab-high-contrast"
        await wait_until(pilot, lambda: load_state().theme == "bootlab-high-contrast",
                         "the theme saved")
    again = replay_app(DEFAULT, speed=0.0)
    async with again.run_test(size=(80, 24)):
        assert again.theme == "bootlab-high-contrast"


async def test_a_theme_that_is_gone_falls_back_to_the_default() -> None:
    path = config_path().parent / "state.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "no-such-theme", "baselines": {}}')
    seen: list[Message] = []
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24), message_hook=seen.append):
        assert app.theme == "bootlab-dark"
    assert "no-such-theme, is gone" in notifications(seen)


async def test_palette_and_quit_keys() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press("escape", "ctrl+q")
        await pilot.pause()
        assert app.return_code == 0
