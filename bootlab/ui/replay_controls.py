"""The replay's seek keys: a few seconds back or forward, the start, the next or previous
milestone. The main screen binds them; the player carries them out (`replay_source`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from textual.app import SystemCommand
from textual.binding import Binding

from bootlab.ui.replay_source import SEEK_STEP_S, Player

SEEKS: dict[str, tuple[str, str, str, str]] = {
    "back": ("left_square_bracket", "seek-back", "Back", f"replay: {SEEK_STEP_S:g} s back"),
    "forward": ("right_square_bracket", "seek-forward", "Forward",
                f"replay: {SEEK_STEP_S:g} s forward"),
    "previous": ("left_curly_bracket", "previous-milestone", "Prev milestone",
                 "replay: back to the previous milestone"),
    "next": ("right_curly_bracket", "next-milestone", "Next milestone",
             "replay: on to the next milestone"),
    "start": ("home", "seek-start", "Start", "replay: back to the start"),
}
"""Seek -> (key, binding id, footer label, what it does)."""
REPLAY_ACTIONS = ("replay_seek",)
"""The main screen's action that seeks (only a replay has it)."""
# Home is a priority key: the console and the tables would take it for scrolling otherwise.
REPLAY_BINDINGS = [
    Binding(key, f"replay_seek('{how}')", label, id=ident, show=how in ("back", "forward"),
            priority=how == "start", tooltip=text)
    for how, (key, ident, label, text) in SEEKS.items()]


def seek(player: Player, how: str) -> None:
    """Ask the player for one of the SEEKS."""
    if how == "back":
        player.seek_by(-SEEK_STEP_S)
    elif how == "forward":
        player.seek_by(SEEK_STEP_S)
    elif how == "start":
        player.seek_to(0.0)
    elif how in ("next", "previous"):
        player.seek_milestone(1 if how == "next" else -1)
    else:
        raise ValueError(f"no seek {how!r}")


def replay_commands(run: Callable[[str], None]) -> Iterator[SystemCommand]:
    """The seeks for the command palette; `run` carries one out."""
    for how, (_key, _ident, label, text) in SEEKS.items():
        yield SystemCommand(f"replay: {label}", text.removeprefix("replay: "),
                            lambda how=how: run(how))
