"""The settings pane: every one-key setting with its state and what shows it, and what the
pending ones would send.

A setting's state is what the boot shows (on, off; unknown until the log, the session or the
environment tells), `not yet` before the boot reached the stage that would show it (a kernel
parameter before the kernel printed), or `n/a` when it does not apply to this board. Beside
it is where that is shown (`log 13`, `inferred`, `session`, `env`: `evidence.weigh`), with the
value seen (a countdown of 2 s) and the weaker sources that disagree. With the pane focused,
a cursor (Up, Down) picks a setting and the line under the list says why in full.

Pressing a setting's key (when the console does not have the focus), or Enter on the cursor's,
marks it pending: switched the other way. The preview is `plan()` of the pending choices
against what is known, so it is exactly what applying them would type at the U-Boot prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from bootlab.core.board.applicability import applicable, not_yet
from bootlab.core.board.evidence import Evidence, Found, same_value, state_word, weigh
from bootlab.core.board.facts import BoardFacts
from bootlab.core.board.plan import plan
from bootlab.core.board.settings import Setting, State

FREE_FORM = ("cmdline_text",)
"""Kinds whose state is not a yes or no (parameters typed by the user): shown blank."""
DETAIL_ROWS = 4
"""Height of the detail under the list (its `height` in DEFAULT_CSS), shown while focused."""


def shown_value(setting: Setting, evidence: Evidence) -> str | None:
    """The value seen, when the state does not say it already (bootdelay 2, not 0)."""
    value = evidence.value
    if value is None or (setting.value is not None and same_value(value, setting.value)):
        return None
    return value


def evidence_label(setting: Setting, evidence: Evidence) -> str:
    """The short text beside a state: the value seen, the kernel's default, where it is
    shown, and the sources that say otherwise."""
    parts = [shown_value(setting, evidence) or "",
             "kernel default" if evidence.kernel_default else "", evidence.source]
    parts += [f"{other.source} says {other.value or ('on' if other.state else 'off')}"
              for other in evidence.against]
    return " · ".join(part for part in parts if part)


def evidence_detail(setting: Setting, evidence: Evidence) -> str:
    """Why, in full: the state, the kernel default, the note, the line, the disagreements."""
    value = shown_value(setting, evidence)
    parts = [f"{setting.title}: {'on' if evidence.state else 'off'}"
             + (f" ({value})" if value else ""),
             f"kernel default ({evidence.kernel_default})" if evidence.kernel_default else "",
             evidence.note if evidence.how != "inferred" else f"inferred: {evidence.note}",
             f"line {evidence.line}: {(evidence.text or '').strip()}"
             if evidence.line is not None else ""]
    parts += [f"but {other.note}" for other in evidence.against]
    return " · ".join(part for part in parts if part)


class SettingsPanel(VerticalScroll):
    """Settings with their keys, states and evidence; pending choices and their preview."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Previous", show=False, id="settings-up",
                tooltip="settings: the setting above"),
        Binding("down", "move(1)", "Next", show=False, id="settings-down",
                tooltip="settings: the setting below"),
        Binding("enter", "toggle_cursor", "Mark", show=False, id="settings-toggle",
                tooltip="settings: mark the highlighted setting pending (or unmark it)"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {"settingspanel--cursor",
                                             "settingspanel--evidence",
                                             "settingspanel--muted"}
    DEFAULT_CSS = """
    SettingsPanel {
        & > #settings-list { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
        & > #settings-preview { width: 1fr; margin-top: 1; color: $text-muted; }
        & > #settings-detail {
            dock: bottom; display: none; height: 4;  /* DETAIL_ROWS */
            background: $boost; color: $text-muted;
        }
        &:focus > #settings-detail { display: block; }
        /* As the phase pane's cursor: on a tint of $primary (its solid $primary is too close
           to black and white alike for text in some themes). */
        & > .settingspanel--cursor {
            background: $block-cursor-blurred-background; color: $text; text-style: bold;
        }
        & > .settingspanel--evidence { color: $text-muted; }
        & > .settingspanel--muted { color: $text-muted; }
    }
    """

    def __init__(self, settings: Sequence[Setting]) -> None:
        super().__init__()
        self.settings = list(settings)
        self.facts = BoardFacts()
        """What the log (and the environment, once read) shows about the board."""
        self.found: Found = {}
        """What the boot's log and the session show about each setting (`read_evidence`)."""
        self.evidence: dict[str, Evidence] = {}
        """Each setting's state as decided with the environment (`weigh`)."""
        self.pending: dict[str, State] = {}
        """Setting id -> the choice waiting to be applied."""
        self.cursor = 0
        """Index of the highlighted setting."""

    def compose(self) -> ComposeResult:
        """The list, the preview and the detail of the highlighted setting."""
        yield Static(id="settings-list")
        yield Static(id="settings-preview")
        yield Static(id="settings-detail")

    def on_mount(self) -> None:
        """Show the settings, and again in a new theme's colours."""
        self.border_title = "settings"
        self.border_subtitle = "key: mark · P apply · T A/B"
        self.refresh_view()
        # The list holds the colours of the theme it was made in.
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.refresh_view())

    def watch_has_focus(self, has_focus: bool) -> None:
        """Show the cursor and what shows its setting with the focus, hide it without (a
        watcher, not `on_focus`: that runs before `has_focus` is set)."""
        super().watch_has_focus(has_focus)
        self.refresh_view()
        if has_focus:
            self._follow_cursor()

    def key_setting(self, character: str | None) -> Setting | None:
        """The setting a typed character toggles."""
        if not character:
            return None
        return next((s for s in self.settings if s.key == character), None)

    def now(self, setting: Setting) -> bool | None:
        """Whether the setting is in force (None: nothing shows it yet)."""
        evidence = self.evidence.get(setting.id)
        return None if evidence is None else evidence.state

    def toggle(self, setting: Setting) -> None:
        """Mark a setting pending (switched the other way), or unmark it."""
        if setting.id in self.pending:
            del self.pending[setting.id]
        else:
            self.pending[setting.id] = not self.now(setting)
        self.refresh_view()

    def clear_pending(self) -> None:
        """Forget the pending choices (they were applied)."""
        self.pending.clear()
        self.refresh_view()

    def set_facts(self, facts: BoardFacts, found: Found | None = None) -> None:
        """What the log shows now (`found`: what it and the session show about each setting,
        None to keep what was found before, as when only the environment changed)."""
        self.facts = facts
        if found is not None:
            self.found = found
        self.refresh_view()

    def action_move(self, step: int) -> None:
        """Move the cursor (and keep it in view)."""
        self.cursor = max(0, min(len(self.settings) - 1, self.cursor + step))
        self.refresh_view()
        self._follow_cursor()

    def _follow_cursor(self) -> None:
        """Scroll so the cursor's row shows above the detail."""
        rows = max(1, self.scrollable_content_region.height - DETAIL_ROWS)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + rows:
            self.scroll_to(y=self.cursor - rows + 1, animate=False)

    def action_toggle_cursor(self) -> None:
        """Mark the highlighted setting pending, or unmark it."""
        if self.settings:
            self.toggle(self.settings[self.cursor])

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
        """Decide the states again and render the list, the preview and the detail."""
        self.evidence = weigh(self.settings, self.found, self.facts.env)
        if not self.is_mounted:
            return
        rows = [(setting, *self._state(setting)) for setting in self.settings]
        state_width = max((len(state) for _, state, _ in rows), default=0)
        title_width = max((len(setting.title) for setting in self.settings), default=0)
        cursor_style = self.get_component_rich_style("settingspanel--cursor")
        evidence_style = self.get_component_rich_style("settingspanel--evidence")
        listing = Text(no_wrap=True, overflow="ellipsis")
        for index, (setting, state, style) in enumerate(rows):
            start = len(listing)
            listing.append(f"{setting.key} ", style="bold")
            listing.append(state.ljust(state_width), style=style)
            listing.append(f" {setting.title.ljust(title_width)}")
            evidence = self.evidence.get(setting.id)
            if evidence is not None and state not in ("n/a", ""):
                listing.append(f" {evidence_label(setting, evidence)}", style=evidence_style)
            if index == self.cursor and self.has_focus:
                listing.stylize(cursor_style, start, len(listing))
            listing.append("\n")
        listing.rstrip()
        self.query_one("#settings-list", Static).update(listing)
        preview = self.preview()
        self.query_one("#settings-preview", Static).update(
            Text("\n".join(preview)) if preview else Text("no setting pending"))
        self.query_one("#settings-detail", Static).update(Text(self._detail()))

    def _state(self, setting: Setting) -> tuple[str, str | Style]:
        if setting.id in self.pending:   # →on: on at the next boot (P), said on the status line
            return f"→{'on' if self.pending[setting.id] else 'off'}", "bold reverse"
        evidence = self.evidence.get(setting.id)
        if evidence is None and not_yet(setting, self.facts):
            return "not yet", self.get_component_rich_style("settingspanel--muted")
        word = state_word(evidence, applicable(setting, self.facts)[0])
        if word in ("n/a", "unknown"):
            return ("", "") if word == "unknown" and setting.kind in FREE_FORM else \
                (word, self.get_component_rich_style("settingspanel--muted"))
        italic = " italic" if evidence is not None and evidence.how == "inferred" else ""
        return (word, f"bold{italic}") if word == "on" else (word, italic.strip())

    def _detail(self) -> str:
        """What shows the highlighted setting's state, in full."""
        if not self.settings:
            return ""
        setting = self.settings[self.cursor]
        ok, why = applicable(setting, self.facts)
        evidence = self.evidence.get(setting.id)
        if state_word(evidence, ok) == "n/a":
            return f"{setting.title}: {why}"
        if evidence is None:
            return f"{setting.title}: nothing in the log shows it yet · {setting.help}"
        return evidence_detail(setting, evidence)
