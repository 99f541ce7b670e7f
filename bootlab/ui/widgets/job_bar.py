"""The job bar: one line above the status line while a board job drives the board."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class JobBar(Static):
    """What the running board job does now, and how to stop it; hidden when none runs."""

    DEFAULT_CSS = """
    JobBar {
        height: 1;
        display: none;
        padding: 0 1;
        background: $accent-muted;
        color: $foreground;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &.-running { display: block; }
    }
    """

    def __init__(self) -> None:
        super().__init__(id="job-bar")
        self.job: str | None = None
        """The running job's title."""

    def start(self, title: str) -> None:
        """A job has the board."""
        self.job = title
        self.add_class("-running")
        self.note("starting")

    def note(self, text: str) -> None:
        """What the job does now."""
        line = Text()
        line.append(self.job or "", style="bold")
        line.append(f" · {text} · ")
        line.append("keys do not reach the board; Ctrl-T C cancels", style="italic")
        self.update(line)

    def stop(self) -> None:
        """The job is over."""
        self.job = None
        self.remove_class("-running")
