"""The bootlab app: themes, keys, the command palette and the way between the screens.

The main screen over the port or replay given on the command line stays at the bottom of the
screen stack (a live port keeps recording); the sessions screen (F2), the compare screen (F3),
replays opened from the sessions screen and the help are pushed over it, and Esc goes back.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme

from bootlab.core.analysis.profiles import Profile
from bootlab.core.board.settings import Setting
from bootlab.core.capture.text import clean
from bootlab.core.files.appconfig import AppConfigError, load_app_config
from bootlab.core.files.config import DEFAULT_SESSIONS
from bootlab.core.files.errors import LocatedError
from bootlab.core.files.state import load_state, save_state
from bootlab.session.batcher import Source
from bootlab.ui.keys import apply_escape_keys
from bootlab.ui.main.screen import MainScreen
from bootlab.ui.screens.compare import CompareScreen
from bootlab.ui.screens.help import bound_classes, own_bindings
from bootlab.ui.screens.sessions import SessionsScreen
from bootlab.ui.themes import DEFAULT_THEME, load_themes
from bootlab.ui.widgets.console import ConsoleView

GC_YOUNG = 10_000
"""Allocations between two collections of Python's youngest generation while the app runs
(Python's default: 700). A flood makes tens of thousands of short-lived objects a second (lines
in transit, messages, rendered rows). Measured when the console still held its 100,000 lines
as objects: with the default, a full collection (~40 ms) ran every ~1.4 s at 50,000 lines/s
and held up whatever key was pressed then; with this, none in 11 s, and 122 ms of collecting
in all against 382 ms (gc callbacks in the app under `bench/bench_tui.py`'s flood). The lines
are packed in blocks now (`LineStore`), which no collection visits."""
GC_MIDDLE = 1
"""Collections of the middle generation between two full ones (Python's default: 10). Cyclic
garbage that outlives two young collections waits in the oldest generation for a full one:
Textual makes it whenever the focus moves (the footer composes its keys anew), and at
`GC_YOUNG` with Python's default a full collection came once in ~1,000,000 allocations (none
in 12 s of flood) while the garbage grew the app's memory. With the objects made while starting
frozen (`gc.freeze`: modules, profiles, the screen, never garbage) a full collection walks only
what was made since, a few thousand objects, so one every ~10 young ones costs little."""


class BootlabApp(App[None]):
    """The bench console over a live port or a replayed session."""

    CSS_PATH = Path(__file__).parent / "bootlab.tcss"
    TITLE = "bootlab"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", id="quit", show=False, priority=True,
                tooltip="quit"),
        Binding("ctrl+p", "command_palette", "Palette", id="command-palette", show=False,
                priority=True, tooltip="command palette (themes, every action)"),
        Binding("f2", "sessions", "Sessions", id="sessions",
                tooltip="sessions: list, filter, replay, baseline, relabel, delete"),
        Binding("f3", "compare", "Compare", id="compare",
                tooltip="compare the sessions marked on the sessions screen (else all)"),
        Binding("escape", "back", "Back", id="back", show=False,
                tooltip="back to the screen before"),
    ]

    def __init__(self, source: Source, profile: Profile, settings: list[Setting],
                 notices: Iterable[str] = (), theme_folders: list[Path] | None = None,
                 sessions: Path = DEFAULT_SESSIONS, config: Path | None = None) -> None:
        """Set up the app; nothing is opened or read until it runs.

        Args:
            source: the replay or live port to show.
            profile: the milestone markers.
            settings: the one-key settings.
            notices: things to tell the user once the app is up (a setting file that failed).
            theme_folders: where themes are read (default: the built-in and user folders).
            sessions: the sessions folder the sessions and compare screens show.
            config: the config file (default: `<config dir>/config.toml`).
        """
        super().__init__()
        self.source = source
        self.profile = profile
        self.settings = settings
        self.notices = list(notices)
        self.theme_folders = theme_folders
        self._gc_threshold = gc.get_threshold()
        """Python's collection thresholds before the app: set back when it ends."""
        self.sessions_folder = sessions
        self.config_file = config
        self.keymap: dict[str, str] = {}
        """Binding id -> keys, from config.toml."""
        self._startup_theme: str | None = None
        """The theme set when starting: its change is announced later, and is no choice of
        the user's to remember."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """A notification, cleaned line by line: messages quote files and device output."""
        super().notify("\n".join(clean(line) for line in message.split("\n")),
                       title=clean(title), severity=severity, timeout=timeout, markup=markup)

    def get_default_screen(self) -> Screen[None]:
        """The main screen."""
        return MainScreen(self.source, self.profile, self.settings)

    def on_mount(self) -> None:
        """Themes (the remembered one in force), keys from config.toml, then the notices."""
        gc.set_threshold(GC_YOUNG, self._gc_threshold[1], GC_MIDDLE)
        self.call_after_refresh(self._freeze_startup)
        self._load_themes()
        self._load_config()
        for notice in self.notices:
            self.notify(notice, severity="warning", timeout=15, markup=False)

    @staticmethod
    def _freeze_startup() -> None:
        """After the first frame: what starting made is left out of later full collections
        (the first collection frees the garbage of starting, the second starts the oldest
        generation's count afresh, so full collections follow `GC_MIDDLE`)."""
        gc.collect()
        gc.freeze()
        gc.collect()

    def on_unmount(self) -> None:
        """Python's collector back as it was (tests run many apps in one process)."""
        gc.unfreeze()
        gc.set_threshold(*self._gc_threshold)

    def _load_themes(self) -> None:
        loaded = load_themes(self.theme_folders)
        for theme in loaded.themes.values():
            self.register_theme(theme)
        problems = list(loaded.failures)
        before = self.theme
        state = load_state()
        if state.problem:
            problems.append(state.problem)
        if state.theme in self.available_themes:
            self.theme = state.theme
        elif DEFAULT_THEME in loaded.themes:
            self.theme = DEFAULT_THEME
        else:
            problems.append(f"theme {DEFAULT_THEME} not found; using Textual's")
        if state.theme and state.theme not in self.available_themes:
            problems.append(f"the theme chosen last time, {state.theme}, is gone")
        if problems:
            self.notify("\n".join(problems), title="themes", severity="warning", markup=False)
        self._startup_theme = self.theme if self.theme != before else None
        self.theme_changed_signal.subscribe(self, self._remember_theme)

    def _remember_theme(self, theme: Theme) -> None:
        if theme.name == self._startup_theme:  # the theme set above, not one chosen
            self._startup_theme = None
            return
        state = load_state()
        if state.theme == theme.name:
            return
        state.theme = theme.name
        try:
            save_state(state)
        except OSError as error:
            self.notify(f"cannot remember the theme: {error}; check that the config folder "
                        "is writable", severity="warning", markup=False)

    def _load_config(self) -> None:
        """Remap keys as config.toml says; anything wrong is one notification."""
        try:
            config = load_app_config(self.config_file)
        except AppConfigError as error:
            apply_escape_keys({})
            self.notify(f"{error}\nThe default keys are in force; fix the file and restart.",
                        title="config.toml", severity="error", timeout=30, markup=False)
            return
        known = {b.id for cls in bound_classes() for b in own_bindings(cls) if b.id}
        problems = [str(LocatedError(config.source, c.line, f"[keys] {c.id}: no key binding has "
                                     "this id (the help, ?, lists them)"))
                    for c in config.keys if c.id not in known]
        self.keymap = {c.id: c.keys for c in config.keys if c.id in known}
        self.set_keymap(self.keymap)
        lines = {c.id: c.line for c in config.escape}
        problems += [str(LocatedError(config.source, lines.get(ident), f"[escape] {reason}"))
                     for ident, reason in apply_escape_keys(
                         {c.id: c.keys for c in config.escape})]
        if problems:
            self.notify("\n".join(problems) + "\nThose keys keep their defaults.",
                        title="config.toml", severity="error", timeout=30, markup=False)

    def get_key_display(self, binding: Binding) -> str:
        """How a key is written (footer, help); a binding config.toml moved shows its new
        keys."""
        remapped = self.keymap.get(binding.id or "")
        display = super().get_key_display
        if remapped is not None and binding.key not in remapped.split(","):
            return " / ".join(display(binding.with_key(key)) for key in remapped.split(","))
        return display(binding)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Ctrl-P reaches the board while typing into a live console (Ctrl-T p opens the
        palette there); Esc goes back only from a screen over the first one."""
        if action == "back":
            return len(self.screen_stack) > 1
        typing_to_board = isinstance(self.focused, ConsoleView) and self.focused.live
        return not (action == "command_palette" and typing_to_board)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's commands (theme, keys, quit ...), the screens, and the screen's own."""
        yield from super().get_system_commands(screen)
        yield SystemCommand("view: Sessions", "recorded boots: replay, baseline, relabel, "
                            "delete, pick for comparison", self.action_sessions)
        yield SystemCommand("view: Compare", "the marked sessions (else all) side by side",
                            self.action_compare)
        own = getattr(screen, "system_commands", None)
        if callable(own):
            yield from own()

    def action_sessions(self) -> None:
        """Show the sessions screen (back to it when it is already open)."""
        for screen in self.screen_stack:
            if isinstance(screen, SessionsScreen):
                while self.screen is not screen:
                    self.pop_screen()
                return
        self.push_screen(SessionsScreen(self.sessions_folder, self.settings))

    def action_compare(self) -> None:
        """Compare the sessions marked on the sessions screen, or every session."""
        if isinstance(self.screen, CompareScreen):
            return
        marked = next((s.marked_paths() for s in self.screen_stack
                       if isinstance(s, SessionsScreen)), [])
        self.push_screen(CompareScreen(self.sessions_folder, marked if len(marked) > 1
                                       else None))
