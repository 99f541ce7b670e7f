"""The replay's seek keys: a few seconds back or forward, the start, the next or previous
milestone, any moment typed in (`parse_moment`). The main screen binds them; the player
carries them out (`session.replay`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from textual.app import SystemCommand
from textual.binding import Binding

from bootlab.session.replay import SEEK_STEP_S, Player

SEEKS: dict[str, tuple[str, str, str, str]] = {
    "back": ("left_square_bracket", "seek-back", "Back", f"replay: {SEEK_STEP_S:g} s back"),
    "forward": ("right_square_bracket", "seek-forward", "Forward",
                f"replay: {SEEK_STEP_S:g} s forward"),
    "previous": ("left_curly_bracket", "previous-milestone", "Prev milestone",
                 "replay: back to the previous milestone"),
    "next": ("right_curly_bracket", "next-milestone", "Next milestone",
             "replay: on to the next milestone"),
    "start": ("home", "seek-start", "Start", "replay: back to the start"),
    "to": ("g", "seek-to", "Go to", "replay: go to a moment typed in (1:30, 45%, end ...)"),
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
    else:  # "to" needs the moment: the main screen asks for it (`GotoDialog`)
        raise ValueError(f"no seek {how!r}")


_CLOCK = re.compile(r"(?:(\d+):)?(\d+):(\d+(?:\.\d*)?)")
_SECONDS = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min|h)?")
_UNIT_S = {None: 1.0, "s": 1.0, "ms": 1e-3, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_moment(text: str, now_s: float, duration_s: float) -> float:
    """A moment of the replay, in session seconds, from what the user typed: `90`, `90s`,
    `2m`, `1:30`, `1:02:03.5`, `45%` of the session, `start`, `end`; with a leading `+` or `-`
    (`-30`, `+1:00`), that far from `now_s`. Kept within the session.

    Raises:
        ValueError: not a moment; the message says what is.
    """
    spec = text.strip().lower()
    if spec == "start":
        return 0.0
    if spec == "end":
        return duration_s
    sign = 0
    if spec.startswith(("+", "-")) and spec[1:]:
        sign, spec = (1 if spec[0] == "+" else -1), spec[1:].strip()
    if spec.endswith("%") and not sign:
        try:
            percent = float(spec[:-1])
        except ValueError:
            percent = -1.0
        if 0 <= percent <= 100:
            return duration_s * percent / 100
        raise ValueError(f"{text.strip()!r}: a percentage is 0 to 100")
    if clock := _CLOCK.fullmatch(spec):
        hours, minutes, seconds = clock.groups()
        value = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    elif number := _SECONDS.fullmatch(spec):
        value = float(number[1]) * _UNIT_S[number[2]]
    else:
        raise ValueError(f"{text.strip()!r} is not a moment: type seconds (90, 2m), m:ss, "
                         "h:mm:ss, a % of the session, start or end; +/- for relative")
    moment = now_s + sign * value if sign else value
    return min(max(moment, 0.0), duration_s)


def replay_commands(run: Callable[[str], None]) -> Iterator[SystemCommand]:
    """The seeks for the command palette; `run` carries one out."""
    for how, (_key, _ident, label, text) in SEEKS.items():
        yield SystemCommand(f"replay: {label}", text.removeprefix("replay: "),
                            lambda how=how: run(how))
