"""Choosing the boot's goal in the app: a milestone of the profile, a pattern a line must
match (it becomes milestone `goal`), a systemd unit (milestone `unit:NAME`), a shell command
that succeeds once the application is ready (`ready:COMMAND`), or a message in the boot's
journal (`journal:REGEX`), both asked after login. The board keys then measure boots to it.
With "as well" checked, the choice joins the goal now, and each must be reached ("display in
5 s and sound in 3 s")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Label, OptionList
from textual.widgets.option_list import Option

from bootlab.core.analysis.goals import GOAL_ID, Goal, GoalError, parse_goal
from bootlab.core.analysis.profiles import Profile
from bootlab.core.analysis.ready import JOURNAL_PREFIX, READY_PREFIX
from bootlab.core.analysis.units import UNIT_PREFIX
from bootlab.ui.screens.dialogs import DIALOG_CSS


class GoalDialog(ModalScreen[Goal | None]):
    """The profile's milestones to choose from, or a pattern; Esc keeps the goal."""

    DEFAULT_CSS = DIALOG_CSS.format(name="GoalDialog") + """
    GoalDialog > Vertical { width: 80; }
    GoalDialog OptionList { height: auto; max-height: 10; margin-top: 1; }
    GoalDialog #goal-problem { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="goal-cancel", tooltip="cancel: the goal stays")]

    def __init__(self, profile: Profile, goal: Goal) -> None:
        """Args:
            profile: the profile in force without a pattern goal's milestone.
            goal: the goal now (its milestone is highlighted, or its pattern filled in).
        """
        super().__init__()
        self.profile = profile
        self.goal = goal

    def compose(self) -> ComposeResult:
        """The milestones, the pattern field, what is wrong with a choice."""
        with Vertical() as box:
            box.border_title = "the boot's goal"
            box.border_subtitle = "Enter chooses · Tab moves · Esc cancels"
            yield Label(f"the board keys measure boots to {self.goal.text} now; a milestone "
                        f"of profile {self.profile.name}:", markup=False)
            yield OptionList(*(Option(Text(f"{m.id:22} {m.title}"), id=m.id)
                               for m in self.profile.markers), id="goal-milestones")
            yield Label("or a pattern a line must match (a regular expression, such as "
                        "'display on'); it becomes milestone `goal`:", markup=False)
            yield Input(self.goal.pattern or "", placeholder="regular expression",
                        id="goal-pattern")
            yield Label("or a systemd unit, active when its status line says so "
                        "(multi-user.target, myapp.service):", markup=False)
            unit = next((i.removeprefix(UNIT_PREFIX) for i in self.goal.until
                         if i.startswith(UNIT_PREFIX)), "")
            yield Input(unit, placeholder="unit name", id="goal-unit")
            yield Label("or a shell command that succeeds once the board is ready, run after "
                        "login until it does (systemctl is-active myapp):", markup=False)
            yield Input(self.goal.ready or "", placeholder="command", id="goal-ready")
            yield Label("or a message of the boot's journal, found after login (a regular "
                        "expression, such as 'Started myapp'):", markup=False)
            yield Input(self.goal.journal or "", placeholder="regular expression",
                        id="goal-journal")
            yield Checkbox(f"as well as {self.goal.text}: the boot is followed until each is "
                           "reached", self.goal.every, id="goal-also")
            yield Label("", id="goal-problem", markup=False)

    def on_mount(self) -> None:
        """The current goal has the focus: its pattern, or its milestone in the list."""
        if self.goal.pattern is not None:
            self.query_one("#goal-pattern", Input).focus()
            return
        for prefix, field in ((UNIT_PREFIX, "#goal-unit"), (READY_PREFIX, "#goal-ready"),
                              (JOURNAL_PREFIX, "#goal-journal")):
            if self.goal.until[0].startswith(prefix):
                self.query_one(field, Input).focus()
                return
        options = self.query_one("#goal-milestones", OptionList)
        ids = [m.id for m in self.profile.markers]
        if self.goal.until[0] in ids:
            options.highlighted = ids.index(self.goal.until[0])
        options.focus()

    @on(OptionList.OptionSelected, "#goal-milestones")
    def _milestone(self, event: OptionList.OptionSelected) -> None:
        self._choose([event.option.id or ""], None)

    @on(Input.Submitted, "#goal-unit")
    def _unit(self, event: Input.Submitted) -> None:
        self._choose([f"{UNIT_PREFIX}{event.value.strip()}"], None)

    @on(Input.Submitted, "#goal-ready")
    def _ready(self, event: Input.Submitted) -> None:
        self._choose([f"{READY_PREFIX}{event.value.strip()}"], None)

    @on(Input.Submitted, "#goal-journal")
    def _journal(self, event: Input.Submitted) -> None:
        self._choose([f"{JOURNAL_PREFIX}{event.value}"], None)

    @on(Input.Submitted, "#goal-pattern")
    def _pattern(self, event: Input.Submitted) -> None:
        self._choose([], event.value)

    def _choose(self, until: Sequence[str], pattern: str | None) -> None:
        also = self.query_one("#goal-also", Checkbox).value
        if also:  # joins the goal now
            until = [*(i for i in self.goal.until if pattern is None or i != GOAL_ID), *until]
            pattern = self.goal.pattern if pattern is None else pattern
        try:
            goal = parse_goal(until, pattern, self.profile, also)
        except GoalError as error:
            self.query_one("#goal-problem", Label).update(str(error))
            return
        self.dismiss(goal)

    def action_cancel(self) -> None:
        """Close: the goal stays as it is."""
        self.dismiss(None)
