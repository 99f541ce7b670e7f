"""Small modal questions: a yes/no confirmation and a line of text."""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

DIALOG_CSS = """
{name} {{
    align: center middle;
    & > Vertical {{
        width: 64;
        max-width: 100%;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }}
    & Horizontal {{ height: auto; align-horizontal: right; margin-top: 1; }}
    & Button {{ margin-left: 1; min-width: 10; }}
    & Label {{ width: 100%; }}
    & Input {{ margin-top: 1; }}
}}
"""


class ConfirmDialog(ModalScreen[bool]):
    """A question answered yes (y, Enter on Yes) or no (n, Esc)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm-yes", tooltip="yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm-no", tooltip="no"),
    ]

    def __init__(self, title: str, question: str, yes: str = "Yes") -> None:
        super().__init__()
        self.title_text = title
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        """The question and the two buttons (No has the focus)."""
        with Vertical() as box:
            box.border_title = self.title_text
            yield Label(self.question)
            with Horizontal():
                yield Button(f"{self.yes} (y)", variant="error", id="yes")
                yield Button("No (n)", id="no")

    def on_mount(self) -> None:
        """No is the safe default."""
        self.query_one("#no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        """Close with the answer."""
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class TextDialog(ModalScreen[str | None]):
    """One line of text: Enter gives it, Esc gives None."""

    DEFAULT_CSS = DIALOG_CSS.format(name="TextDialog")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="text-cancel", tooltip="cancel")]

    def __init__(self, title: str, prompt: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.prompt = prompt
        self.value = value

    def compose(self) -> ComposeResult:
        """The prompt and the field."""
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "Enter saves · Esc cancels"
            yield Label(self.prompt)
            yield Input(self.value, id="text-value")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Close without an answer."""
        self.dismiss(None)


Choice = TypeVar("Choice")


class StartDialog(ModalScreen[Choice | None], Generic[Choice]):
    """A dialog that starts a board job: the Start button (id `start`) runs `_start`, which
    dismisses with the choice when the fields are right; any other button and Escape (bound
    to `cancel` by the subclass) close it with None: nothing is run."""

    def _start(self) -> None:
        """Read the fields; dismiss with the choice, or say what is wrong and stay open."""
        raise NotImplementedError

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self._start()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        """Close: nothing is run."""
        self.dismiss(None)
