"""The settings pane: every one-key setting with its state, and what the pending ones would send.

A setting's state is what the board shows (on, off, unknown until the log or the environment
tells) or `n/a` when it does not apply to this board. Pressing a setting's key (when the
console does not have the focus) marks it pending: switched the other way. The preview is
`plan()` of the pending choices against what is known, so it is exactly what applying them
would type at the U-Boot prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from bootlab.core.settings import BoardFacts, Setting, State, applicable, in_force, plan


def current_state(setting: Setting, facts: BoardFacts) -> bool | None:
    """Whether the setting is in force on the board now (None: not known yet)."""
    if setting.kind.startswith("cmdline") and not facts.env and facts.kernel_cmdline is None:
        return None
    value = in_force(setting, facts)
    if value is None:
        return False if facts.env else None
    if isinstance(value, bool):
        return value
    return setting.value is None or value == setting.value


class SettingsPanel(VerticalScroll):
    """Settings with their keys and states; pending choices and their preview."""

    DEFAULT_CSS = """
    SettingsPanel {
        & > #settings-list { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
        & > #settings-preview { width: 1fr; margin-top: 1; color: $text-muted; }
    }
    """

    def __init__(self, settings: Sequence[Setting]) -> None:
        super().__init__()
        self.settings = list(settings)
        self.facts = BoardFacts()
        """What the log (and the environment, once read) shows about the board."""
        self.pending: dict[str, State] = {}
        """Setting id -> the choice waiting to be applied."""

    def compose(self) -> ComposeResult:
        """The list and the preview."""
        yield Static(id="settings-list")
        yield Static(id="settings-preview")

    def on_mount(self) -> None:
        """Show the settings."""
        self.border_title = "settings"
        self.border_subtitle = "key: mark · P apply · T A/B"
        self.refresh_view()

    def key_setting(self, character: str | None) -> Setting | None:
        """The setting a typed character toggles."""
        if not character:
            return None
        return next((s for s in self.settings if s.key == character), None)

    def toggle(self, setting: Setting) -> None:
        """Mark a setting pending (switched the other way), or unmark it."""
        if setting.id in self.pending:
            del self.pending[setting.id]
        else:
            self.pending[setting.id] = not current_state(setting, self.facts)
        self.refresh_view()

    def clear_pending(self) -> None:
        """Forget the pending choices (they were applied)."""
        self.pending.clear()
        self.refresh_view()

    def set_facts(self, facts: BoardFacts) -> None:
        """What the log shows now."""
        self.facts = facts
        self.refresh_view()

    def preview(self) -> list[str]:
        """The commands the pending choices would send, then warnings and skips."""
        if not self.pending:
            return []
        try:
            result = plan(self.settings, self.pending, self.facts.env, self.facts)
        except ValueError as error:
            return [f"! {error}"]
        lines = ["will send:", *(f"  {command}" for command in result.commands)]
        if not result.commands:
            lines.append("  (nothing)")
        lines += [f"! {warning}" for warning in result.warnings]
        return lines

    def refresh_view(self) -> None:
        """Render the list and the preview again."""
        if not self.is_mounted:
            return
        listing = Text(no_wrap=True, overflow="ellipsis")
        for setting in self.settings:
            state, style = self._state(setting)
            listing.append(f"{setting.key} ", style="bold")
            listing.append(f"{state:11}", style=style)
            listing.append(f" {setting.title}\n")
        listing.rstrip()
        self.query_one("#settings-list", Static).update(listing)
        preview = self.preview()
        self.query_one("#settings-preview", Static).update(
            Text("\n".join(preview)) if preview else Text("no setting pending"))

    def _state(self, setting: Setting) -> tuple[str, str]:
        if setting.id in self.pending:
            return f"pending {'on' if self.pending[setting.id] else 'off'}", "bold reverse"
        ok, _why = applicable(setting, self.facts)
        if not ok:
            return "n/a", "dim"
        now = current_state(setting, self.facts)
        return {True: ("on", "bold"), False: ("off", ""), None: ("unknown", "dim")}[now]
