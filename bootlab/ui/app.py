"""The bootlab app: themes, the command palette and the main screen over one source."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.screen import Screen

from bootlab.core.profiles import Profile
from bootlab.core.settings import Setting
from bootlab.ui.feed import Source
from bootlab.ui.screens.main import MainScreen
from bootlab.ui.themes import DEFAULT_THEME, load_themes
from bootlab.ui.widgets.console import ConsoleView


class BootlabApp(App[None]):
    """The bench console over a live port or a replayed session."""

    CSS_PATH = Path(__file__).parent / "bootlab.tcss"
    TITLE = "bootlab"

    def __init__(self, source: Source, profile: Profile, settings: list[Setting],
                 notices: Iterable[str] = (), theme_folders: list[Path] | None = None) -> None:
        """Set up the app; nothing is opened or read until it runs.

        Args:
            source: the replay or live port to show.
            profile: the milestone markers.
            settings: the one-key settings.
            notices: things to tell the user once the app is up (a setting file that failed).
            theme_folders: where themes are read (default: the built-in and user folders).
        """
        super().__init__()
        self.source = source
        self.profile = profile
        self.settings = settings
        self.notices = list(notices)
        self.theme_folders = theme_folders

    def get_default_screen(self) -> Screen[None]:
        """The main screen."""
        return MainScreen(self.source, self.profile, self.settings)

    def on_mount(self) -> None:
        """Register the themes (saying once which files failed) and tell the notices."""
        loaded = load_themes(self.theme_folders)
        for theme in loaded.themes.values():
            self.register_theme(theme)
        if DEFAULT_THEME in loaded.themes:
            self.theme = DEFAULT_THEME
        problems = loaded.failures + ([] if DEFAULT_THEME in loaded.themes else
                                      [f"theme {DEFAULT_THEME} not found; using Textual's"])
        if problems:
            self.notify("\n".join(problems), title="themes", severity="warning", markup=False)
        for notice in self.notices:
            self.notify(notice, severity="warning", timeout=15, markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Ctrl-P reaches the board while typing into a live console (Ctrl-T p opens the
        palette there)."""
        typing_to_board = isinstance(self.focused, ConsoleView) and self.focused.live
        return not (action == "command_palette" and typing_to_board)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's commands (theme, keys, quit ...) and the screen's own, by area."""
        yield from super().get_system_commands(screen)
        own = getattr(screen, "system_commands", None)
        if callable(own):
            yield from own()
