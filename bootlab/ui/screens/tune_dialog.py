"""What a tune will do, asked before it starts: the budget, the limits (hours, steps, boots per
step), the settings to try first, whether settings are saved and each boot's dmesg read. The
same choices as `bootlab tune`'s options, checked the same way, so the app runs the same loop
as the CLI."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Checkbox, Input, Label, Static

from bootlab.core.analysis.sequential import parse_effect
from bootlab.core.board.abplan import SpecError, format_spec, parse_spec
from bootlab.session.board_jobs import STEP_BOOTS, TuneChoice
from bootlab.ui.screens.board_dialogs import COLLECT_LABEL, PERSIST_LABEL
from bootlab.ui.screens.dialogs import DIALOG_CSS, StartDialog

FORM_CHROME = 11
"""Rows of the dialog around its scrolling form: border, problem (two lines), buttons."""
MIN_STEP_BOOTS = 3
"""Boots per variant a tune's step needs at least (its first look)."""


def parse_choice(budget: str, hours: str, steps: str, boots: str, tries: str,
                 persist: bool, keep_going: bool) -> TuneChoice:
    """The dialog's fields as a choice; empty optional fields mean no limit.

    Raises:
        ValueError: a field that is not what it says, with the field named.
    """
    try:
        budget_s = parse_effect(budget) if budget.strip() else None
    except ValueError as error:
        raise ValueError(f"budget: {error}") from None
    try:
        max_hours = float(hours) if hours.strip() else None
    except ValueError:
        raise ValueError(f"time limit {hours!r}: give hours, such as 2 or 0.5") from None
    if max_hours is not None and not max_hours > 0:
        raise ValueError("time limit: must be more than zero hours")
    if steps.strip() and not (steps.strip().isdigit() and int(steps) >= 1):
        raise ValueError(f"steps {steps!r}: give a whole number, 1 or more")
    if not (boots.strip().isdigit() and int(boots) >= MIN_STEP_BOOTS):
        raise ValueError(f"boots per step {boots!r}: give a whole number, {MIN_STEP_BOOTS} "
                         "or more (a step's first look is after three boots a side)")
    try:
        items = tuple(format_spec(parse_spec(item)) for item in tries.split() if item)
    except SpecError as error:
        raise ValueError(f"try first: {error}") from None
    return TuneChoice(persist, budget_s, max_hours, int(steps) if steps.strip() else None,
                      int(boots), items, keep_going)


class TuneDialog(StartDialog[TuneChoice]):
    """A tune's budget and limits; Start or Cancel."""

    DEFAULT_CSS = DIALOG_CSS.format(name="TuneDialog") + """
    TuneDialog > Vertical { width: 84; max-height: 100%; }
    TuneDialog #tune-form { height: auto; }
    TuneDialog Label { margin-top: 1; }
    TuneDialog Input { margin-top: 0; }
    TuneDialog .tune-limits { margin-top: 0; align-horizontal: left; }
    TuneDialog .tune-limits > Input { width: 1fr; }
    TuneDialog #tune-problem { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="tune-cancel",
                tooltip="cancel: nothing is run")]

    def __init__(self, goal: str, resuming: str | None = None, collect: bool = False) -> None:
        super().__init__()
        self.goal = goal
        self.resuming = resuming
        """The unfinished tune that Start resumes (its own budget stays), if any."""
        self.collect = collect
        """Whether reading each boot's dmesg is offered ticked (a login was given)."""

    def compose(self) -> ComposeResult:
        """The plan in words, the fields, the save choice, the buttons."""
        with Vertical() as box:
            box.border_title = f"Tune this board to {self.goal}"
            box.border_subtitle = "Enter starts · Tab moves · Esc cancels"
            with VerticalScroll(id="tune-form"):  # the buttons stay in view on a small terminal
                yield Static(self._plan(), id="tune-plan")
                yield Label("budget: stop once the goal's median is at or below (3s, 2500ms; "
                            "empty: cut as far as proven savings go)")
                yield Input(id="tune-budget", placeholder="e.g. 3s")
                yield Label("time limit in hours, steps at most (empty: none)")
                with Horizontal(classes="tune-limits"):
                    yield Input(id="tune-hours", placeholder="hours")
                    yield Input(id="tune-steps", type="integer", placeholder="steps")
                yield Label("boots per variant at most in each step's A/B run")
                yield Input(str(STEP_BOOTS), id="tune-boots", type="integer")
                yield Label("settings to try first, before the recommendations (as `bootlab "
                            "ab` takes items, separated by spaces: bootdelay=0 quiet)")
                yield Input(id="tune-tries", placeholder="e.g. bootdelay=0 quiet")
                yield Checkbox("go on past the budget while something predicted is left",
                               id="tune-keep-going")
                yield Checkbox(PERSIST_LABEL + "; `bootlab tune --restore` puts them back",
                               id="tune-persist")
                yield Checkbox(COLLECT_LABEL, self.collect, id="tune-collect")
            yield Label("", id="tune-problem")
            with Horizontal():
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """The budget has the focus."""
        self.query_one("#tune-budget", Input).focus()

    def on_resize(self, event: events.Resize) -> None:
        """The form scrolls within what the terminal leaves beside the border, a two-line
        problem and the buttons, so Start stays in view on 80x24."""
        self.query_one("#tune-form").styles.max_height = max(4, event.size.height - FORM_CHROME)

    def _plan(self) -> str:
        first = (f"Resumes {self.resuming}: its budget and kept settings stay as they are."
                 if self.resuming else
                 "Boots the board as it is until its time is steady, then repeats: rank "
                 "what bootlab can set itself by predicted saving, A/B-test the top one "
                 "against the settings kept so far, keep it only when its saving is proven "
                 "(interval above zero), it was in force and the boot lost nothing.")
        return (first + "\nSettings that need a rebuild are listed, never applied. The "
                "U-Boot environment is saved before the first change.")

    def _value(self, name: str) -> str:
        return self.query_one(f"#tune-{name}", Input).value

    def _start(self) -> None:
        try:
            choice = parse_choice(
                self._value("budget"), self._value("hours"), self._value("steps"),
                self._value("boots"), self._value("tries"),
                self.query_one("#tune-persist", Checkbox).value,
                self.query_one("#tune-keep-going", Checkbox).value)
        except ValueError as error:
            self.query_one("#tune-problem", Label).update(str(error))
            return
        self.dismiss(replace(choice, collect=self.query_one("#tune-collect", Checkbox).value))

    @on(Input.Submitted)
    def _submitted(self, _event: Input.Submitted) -> None:
        self._start()
