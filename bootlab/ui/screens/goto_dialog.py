"""Going to a moment of a replay typed in: any second of an hour-long session, not only the
steps of the seek keys (`replay_controls.parse_moment` reads what is typed)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from bootlab.ui.main.replay_controls import parse_moment
from bootlab.ui.screens.dialogs import DIALOG_CSS


def clock(t_s: float) -> str:
    """Session seconds as h:mm:ss.s (or m:ss.s under an hour)."""
    minutes, seconds = divmod(t_s, 60)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{seconds:04.1f}" if hours else f"{minutes}:{seconds:04.1f}"


class GotoDialog(ModalScreen[float | None]):
    """A field for the moment; Enter goes there, Esc stays."""

    DEFAULT_CSS = DIALOG_CSS.format(name="GotoDialog") + """
    GotoDialog #goto-problem { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="goto-cancel", tooltip="cancel: stay here")]

    def __init__(self, now_s: float, duration_s: float) -> None:
        super().__init__()
        self.now_s = now_s
        self.duration_s = duration_s

    def compose(self) -> ComposeResult:
        """Where the replay is, the field, what is wrong with what was typed."""
        with Vertical() as box:
            box.border_title = "go to"
            box.border_subtitle = "Enter goes · Esc cancels"
            yield Label(f"now {clock(self.now_s)} of {clock(self.duration_s)}; type 90, 2m, "
                        "1:30, 1:02:03, 45%, start, end, or -30 / +1:00 from now",
                        markup=False)
            yield Input(placeholder="moment", id="goto-moment")
            yield Label("", id="goto-problem", markup=False)

    @on(Input.Submitted, "#goto-moment")
    def _go(self, event: Input.Submitted) -> None:
        try:
            moment = parse_moment(event.value, self.now_s, self.duration_s)
        except ValueError as error:
            self.query_one("#goto-problem", Label).update(str(error))
            return
        self.dismiss(moment)

    def action_cancel(self) -> None:
        """Close: the replay stays where it is."""
        self.dismiss(None)
