"""What a board job will do, shown before anything is sent: applying the pending settings, and
an A/B run's variants, boots per variant and whether settings are saved; and whether each
measured boot's dmesg is read after its goal (on by default where a login was given)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from bootlab.control.planning import variant_plan
from bootlab.core.analysis.sequential import DEFAULT_MAX_BOOTS
from bootlab.core.board.abplan import SpecError, parse_spec
from bootlab.core.board.settings import State
from bootlab.session.board_jobs import Board, apply_plan
from bootlab.ui.screens.dialogs import DIALOG_CSS, StartDialog

MIN_AB_BOOTS = 2
"""Boots per variant an A/B run needs for a confidence interval."""
FIXED_AB_BOOTS = "5"
"""Boots per variant the dialog offers for a fixed run."""
PERSIST_LABEL = "save them (saveenv), then reset: the autoboot is measured"
LINUX_LABEL = ("edit the boot file from Linux (log in, edit, reboot from Linux: saved, as "
               "--from-linux --persist)")
COLLECT_LABEL = ("collect: after the goal, log in and read the boot's dmesg: the kernel "
                 "milestones the console did not show join the phases (--collect)")


@dataclass(frozen=True)
class ApplyChoice:
    """Send these commands; with `persist`, they end with saveenv and the board is reset."""

    persist: bool
    commands: tuple[str, ...]
    from_linux: bool = False
    """A boot file carrying the kernel's arguments is edited from Linux (`--from-linux`)."""
    collect: bool = False
    """Read the boot's dmesg after its goal (`--collect`)."""


@dataclass(frozen=True)
class ABChoice:
    """Start the A/B run with these boots per variant (at most, when until decided)."""

    boots: int
    persist: bool
    until_decided: bool = True
    """Stop as soon as the goal's interval decides (`analysis.sequential`)."""
    from_linux: bool = False
    """A boot file carrying the kernel's arguments is edited from Linux (`--from-linux`)."""
    collect: bool = False
    """Read each boot's dmesg after its goal (`--collect`)."""


def linux_first(board: Board) -> bool:
    """Whether a boot file the kernel's arguments come from can only be edited from Linux on
    this board (a job found it), so the dialogs offer that route checked."""
    return board.route in ("linux", "linux only")


def _steps(persist: bool) -> tuple[str, str]:
    """How the board is brought to its prompt, and how the measured boot starts."""
    reach = ("find where the board is (Enter), reboot it from Linux or stop its autoboot "
             "(space), then printenv")
    boot = ("reset: the boot is measured from the reset, autoboot included" if persist
            else "boot: the boot is measured from the boot command (these settings last "
                 "until the next reset)")
    return reach, boot


class ApplyDialog(ModalScreen[ApplyChoice | None]):
    """The exact commands applying the pending settings sends, and Send or Cancel."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ApplyDialog") + """
    ApplyDialog > Vertical { width: 96; }
    ApplyDialog #apply-plan { margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="apply-cancel", tooltip="cancel: nothing is sent")]

    def __init__(self, board: Board, chosen: Mapping[str, State], persist: bool) -> None:
        super().__init__()
        self.board = board
        self.chosen = dict(chosen)
        self.from_linux = linux_first(board)
        self.persist = persist or self.from_linux
        self.commands: list[str] | None = None
        """What Send sends (None: the settings cannot be planned)."""

    def compose(self) -> ComposeResult:
        """The plan, the save choice, the buttons (Send has the focus)."""
        with Vertical() as box:
            box.border_title = "apply the pending settings and boot"
            box.border_subtitle = "Enter on a button · Space toggles · Esc cancels"
            yield Static(id="apply-plan")
            yield Checkbox(PERSIST_LABEL, self.persist, id="apply-persist")
            yield Checkbox(LINUX_LABEL, self.from_linux, id="apply-linux")
            yield Checkbox(COLLECT_LABEL, self.board.collect, id="apply-collect")
            with Horizontal():
                yield Button("Send and boot", variant="primary", id="send")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Show the plan."""
        self._show()
        self.query_one("#send", Button).focus()

    def _show(self) -> None:
        reach, boot = _steps(self.persist)
        try:
            the_plan, commands = apply_plan(self.board, self.chosen, self.persist,
                                            from_linux=self.from_linux)
        except ValueError as error:
            self.commands = None
            self.query_one("#apply-plan", Static).update(f"cannot apply: {error}")
            self.query_one("#send", Button).disabled = True
            return
        self.commands = commands
        lines = [f"1. {reach}", "2. send, typed slowly (nothing is sent if printenv shows an "
                 "environment that gives other commands):",
                 *(f"     {command}" for command in commands or ["(nothing)"]),
                 f"3. {boot}"]
        lines += [f"! {warning}" for warning in the_plan.warnings]
        self.query_one("#apply-plan", Static).update("\n".join(lines))

    @on(Checkbox.Changed, "#apply-persist")
    def _persist(self, event: Checkbox.Changed) -> None:
        self.persist = event.value
        if not event.value:
            self.query_one("#apply-linux", Checkbox).value = False
        self._show()

    @on(Checkbox.Changed, "#apply-linux")
    def _linux(self, event: Checkbox.Changed) -> None:
        self.from_linux = event.value
        if event.value:
            self.query_one("#apply-persist", Checkbox).value = True
        self._show()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "send" and self.commands is not None:
            self.dismiss(ApplyChoice(self.persist, tuple(self.commands), self.from_linux,
                                     self.query_one("#apply-collect", Checkbox).value))
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        """Close: nothing is sent."""
        self.dismiss(None)


class ABDialog(StartDialog[ABChoice]):
    """An A/B run's variants and what they send; boots per variant; Start or Cancel."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ABDialog") + """
    ABDialog > Vertical { width: 96; }
    ABDialog #ab-plan { margin-top: 1; }
    ABDialog #ab-problem { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="ab-cancel", tooltip="cancel: nothing is run")]

    def __init__(self, board: Board, variants: Sequence[tuple[str, str]], persist: bool,
                 notes: Sequence[str] = ()) -> None:
        super().__init__()
        self.board = board
        self.variants = list(variants)
        self.from_linux = linux_first(board)
        self.persist = persist or self.from_linux
        self.notes = list(notes)

    def compose(self) -> ComposeResult:
        """The variants, the number of boots, the save choice, the buttons."""
        with Vertical() as box:
            base, other = self.variants[0][0], self.variants[-1][0]
            box.border_title = f"A/B run: {other} against {base}"
            box.border_subtitle = "Enter starts · Tab moves · Esc cancels"
            yield Static(self._plan(), id="ab-plan")
            yield Checkbox("until decided: judge after each planned round and stop when the "
                           "goal's interval answers (the error rate stays at 5%)", True,
                           id="ab-until")
            yield Label("boots per variant, at most (each round boots every variant once, in "
                        "a random order):", id="ab-boots-label")
            yield Input(str(DEFAULT_MAX_BOOTS), type="integer", id="ab-boots")
            yield Label("", id="ab-problem")
            yield Checkbox(PERSIST_LABEL + "; put back at the end", self.persist,
                           id="ab-persist")
            yield Checkbox(LINUX_LABEL, self.from_linux, id="ab-linux")
            yield Checkbox(COLLECT_LABEL, self.board.collect, id="ab-collect")
            with Horizontal():
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """The number of boots has the focus."""
        self.query_one("#ab-boots", Input).focus()

    def _plan(self) -> str:
        facts = self.board.facts
        lines = []
        for name, spec in self.variants:
            if not spec:
                lines.append(f"{name}: the board as it is")
                continue
            try:
                _, commands, _ = variant_plan(self.board.settings, parse_spec(spec),
                                              facts.env, facts, ())
            except (SpecError, ValueError) as error:
                lines.append(f"{name} ({spec}): {error}")
                continue
            lines.append(f"{name} ({spec}): " + ("; ".join(commands) or "nothing to send"))
        lines.append("Before each boot bootlab reads printenv and sets what the variants "
                     "change to that variant's values; each boot gets its own session file.")
        lines += [f"! {note}" for note in self.notes]
        return "\n".join(lines)

    def _start(self) -> None:
        text = self.query_one("#ab-boots", Input).value.strip()
        if not text.isdigit() or int(text) < MIN_AB_BOOTS:
            self.query_one("#ab-problem", Label).update(
                f"give a whole number of boots, {MIN_AB_BOOTS} or more (a confidence "
                "interval needs two boots a side)")
            return
        self.dismiss(ABChoice(int(text), self.persist,
                              self.query_one("#ab-until", Checkbox).value, self.from_linux,
                              self.query_one("#ab-collect", Checkbox).value))

    @on(Checkbox.Changed, "#ab-until")
    def _until(self, event: Checkbox.Changed) -> None:
        """Until decided, the boots are a budget; else exactly this many (5 unless changed)."""
        boots = self.query_one("#ab-boots", Input)
        offered = (FIXED_AB_BOOTS, str(DEFAULT_MAX_BOOTS))
        if boots.value in offered:
            boots.value = offered[event.value]
        self.query_one("#ab-boots-label", Label).update(
            "boots per variant, " + ("at most" if event.value else "exactly") +
            " (each round boots every variant once, in a random order):")

    @on(Input.Submitted, "#ab-boots")
    def _submitted(self, _event: Input.Submitted) -> None:
        self._start()

    @on(Checkbox.Changed, "#ab-linux")
    def _linux(self, event: Checkbox.Changed) -> None:
        self.from_linux = event.value
        if event.value:
            self.query_one("#ab-persist", Checkbox).value = True

    @on(Checkbox.Changed, "#ab-persist")
    def _persist(self, event: Checkbox.Changed) -> None:
        self.persist = event.value
        if not event.value:
            self.query_one("#ab-linux", Checkbox).value = False
