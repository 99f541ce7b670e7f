"""The status line: where the bytes come from, the connection, the clock, the boot's goal, the
recording."""

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


class StatusLine(Static):
    """One line of status at the bottom of the screen."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
        color: $foreground;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    _shown: Text | None = None

    def show(self, status: Status) -> None:
        """Render a status; nothing happens when it reads the same.

        No layout pass: the line is one row of a fixed width, and a layout pass redraws the
        whole screen, which the clock would otherwise ask for several times a second."""
        text = render_status(status)
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)


def render_status(status: Status) -> Text:
    """The status as one line of text, most important first."""
    parts: list[tuple[str, str]] = [(status.source, "bold")]
    if status.baud:
        parts.append((f"{status.baud} baud", ""))
    if status.state:
        style = "bold red" if status.state.startswith(("failed", "lost", "reconnecting")) \
            else ""
        parts.append((status.state, style))
    if status.since_reference_s is not None:
        parts.append((f"T+{status.since_reference_s:.3f} s", "bold"))
    if status.goal:
        parts.append((f"goal: {status.goal}", ""))
    if status.unrecorded:
        parts.append(("NOT RECORDING", "bold red"))
    elif status.recording:
        parts.append((f"rec {status.recording}", ""))
    if status.board:
        parts.append((f"board {status.board}", ""))
    if status.label:
        parts.append((f"label {status.label}", ""))
    text = Text(" ")
    for index, (part, style) in enumerate(parts):
        if index:
            text.append(" │ ", style="dim")
        text.append(clean(part), style=style)  # board, label, file: a session's, untrusted
    return text
