"""The status line: where the bytes come from, the connection, the clock, the boot's goal, the
recording. An alarm is drawn in the line's own colours reversed: readable in every theme,
which not every theme's error colour is on its panel."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from bootlab.core.capture.text import clean


@dataclass
class Status:
    """Everything the status line shows."""

    source: str
    """The port, or `replay: FILE`."""
    baud: int | None = None
    state: str = ""
    """connecting, connected, reconnecting, failed; playing 1x, paused, ended."""
    recording: str | None = None
    """The session file being written."""
    unrecorded: bool = False
    """The session could not be written (a full disk, a read-only folder): nothing is."""
    board: str = ""
    label: str = ""
    since_reference_s: float | None = None
    """Time since the boot's reference point."""
    goal: str = ""
    """What the boot is measured to (`login`, `/display on/`; "" when not known)."""
    goal_s: float | None = None
    """When the boot reached its goal (seconds from its reference), once it did."""
    goal_vs_base_s: float | None = None
    """That time against the baseline's (negative: faster), when there is a baseline."""
    pending: tuple[str, ...] = ()
    """Settings marked pending: nothing is sent until P or T."""


class StatusLine(Static):
    """One line of status at the bottom of the screen."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
        color: $text;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    _shown: Text | None = None

    def show(self, status: Status) -> None:
        """Render a status for the line's width; nothing happens when it reads the same.

        No layout pass: the line is one row of a fixed width, and a layout pass redraws the
        whole screen, which the clock would otherwise ask for several times a second."""
        text = render_status(status, self.size.width or 1000)
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)

    def on_resize(self) -> None:
        """Fit the parts to the new width."""
        self._shown = None


SHORT_SOURCE = 24
"""Characters of the source's name kept before a replay's state is left out."""
MIN_SOURCE = 12
"""Characters of the source's name kept at the least when the line is too narrow."""
Part = tuple[str, str, int]
"""A part of the line: its text, its style, and its rank (0 always shown; the highest rank
is left out first when the line is too narrow)."""


def _parts(status: Status) -> list[Part]:
    parts: list[Part] = [(status.source, "bold", 0)]
    if status.baud:
        parts.append((f"{status.baud} baud", "", 5))
    if status.state:
        alarm = status.state.startswith(("failed", "lost", "reconnecting"))
        held = status.state.startswith(("ended", "paused"))   # a replay not moving: say so
        parts.append((status.state, "bold reverse" if alarm else "", 0 if alarm else
                      1 if held else 3))
    if status.goal_s is not None:
        base = "" if status.goal_vs_base_s is None else \
            f" ({status.goal_vs_base_s:+.2f} vs base)".replace("-", "\u2212")
        parts.append((f"{status.goal} {status.goal_s:.2f} s{base}", "bold", 0))
    elif status.goal:
        parts.append((f"goal: {status.goal}", "", 1))
    if status.pending:
        parts.append((f"pending {', '.join(status.pending)}: P apply · T A/B", "bold reverse",
                      0))
    if status.since_reference_s is not None:
        parts.append((f"T+{status.since_reference_s:.3f} s", "bold", 2))
    if status.unrecorded:
        parts.append(("NOT RECORDING", "bold reverse", 0))
    elif status.recording:
        parts.append((f"rec {status.recording}", "", 4))
    if status.board:
        parts.append((f"board {status.board}", "", 6))
    if status.label:
        parts.append((f"label {status.label}", "", 6))
    return parts


def render_status(status: Status, width: int = 1000) -> Text:
    """The status as one line of text that fits `width` cells: the parts that matter most
    (where the bytes come from, an alarm, the goal's time, what is pending) always, the others
    as room allows, left out whole rather than cut; a long file name gives way (cut in its
    middle) before a replay's state does."""
    parts = [(clean(text), style, rank) for text, style, rank in _parts(status)]

    def length() -> int:
        return 1 + sum(len(text) for text, _, _ in parts) + 3 * max(0, len(parts) - 1)

    def drop(down_to: int) -> None:
        while length() > width and any(rank > down_to for _, _, rank in parts):
            worst = max(rank for _, _, rank in parts)
            del parts[max(i for i, (_, _, rank) in enumerate(parts) if rank == worst)]

    def shorten(least: int) -> None:
        source, style, rank = parts[0]
        keep = max(least, len(source) - (length() - width))
        if length() > width and keep < len(source):
            half = keep // 2
            parts[0] = (source[:half] + "…" + source[len(source) - (keep - half - 1):],
                        style, rank)

    drop(1)
    shorten(SHORT_SOURCE)
    drop(0)
    shorten(MIN_SOURCE)
    text = Text(" ", no_wrap=True, overflow="ellipsis")
    for index, (part, style, _) in enumerate(parts):
        if index:
            text.append(" │ ", style="dim")
        text.append(part, style=style)  # board, label, file: a session's, untrusted
    return text
