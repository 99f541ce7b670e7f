"""The recommendations screen: what to change next for the current (or last) boot, ranked by
predicted saving, each quoting the lines it is based on and, where an A/B run measured it,
the measured difference beside the prediction. Enter on one measures it with an A/B run of
its setting (live only: a replay has no board, and the key is off there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from bootlab.core.advice.predictions import ABBoot, Outcome, ab_boots, check_predictions
from bootlab.core.advice.recommendation import Recommendation, route_for
from bootlab.core.advice.rules import advise
from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.profiles import Profile
from bootlab.core.board.abfiles import ab_sessions
from bootlab.core.board.abplan import ABStateError
from bootlab.core.board.settings import Setting
from bootlab.core.capture.session import port_header
from bootlab.core.capture.sources import SourceError, open_source
from bootlab.ui.widgets.key_footer import KeyFooter


@dataclass(frozen=True)
class AdviceFound:
    """The recommendations for one boot and the A/B measurements of them."""

    source: Path | None
    """The session advised on (None: no boot found)."""
    recommendations: tuple[Recommendation, ...]
    outcomes: tuple[Outcome, ...]
    problems: tuple[str, ...]
    """Files that could not be read, in words."""
    checks: tuple[str, ...] = ()
    """Per recommendation, the command that measures it on this board (its route there: as
    `bootlab advise` says it), or why bootlab cannot apply it; '' for none."""


def load_advice(paths: Sequence[Path], folder: Path, profile: Profile,
                settings: Sequence[Setting] = ()) -> AdviceFound:
    """Advise on the newest of `paths` holding a boot that started a kernel (passing over the
    boots of A/B runs, whose settings are not the board's own, unless there is nothing else);
    measure the recommendations against the A/B runs whose state files are in `folder`; say
    the command that measures each on this board (where its kernel arguments come from, as
    a run on its port found: `settings` tell which are kernel parameters)."""
    problems: list[str] = []
    try:
        measured = ab_sessions([folder])
    except ABStateError as error:
        problems.append(str(error))
        measured = []
    chosen: tuple[Path, list[Recommendation]] | None = None
    for path in sorted(reversed(paths), key=lambda path: path in measured):
        try:
            source = open_source(path)
        except SourceError as error:
            problems.append(str(error))
            continue
        analysis = analyze_source(source, profile)
        if any(boot.reached("starting_kernel") for boot in analysis.boots):
            chosen = path, advise(source, analysis)
            port = source.meta.get("port")
            arguments = source.meta.get("arguments") or port_header(path.parent, port,
                                                                    "arguments")
            break
    if chosen is None:
        return AdviceFound(None, (), (), tuple(problems))
    kinds = {s.id: s.kind for s in settings}
    checks = []
    for rec in chosen[1]:
        route = route_for(kinds.get(rec.setting or "", "").startswith("cmdline"), arguments)
        command = rec.ab_command(port if isinstance(port, str) else "PORT", route=route)
        checks.append(command or (f"bootlab cannot apply it on this board: {route.blocked}"
                                  if route.blocked and rec.variant else ""))
    boots: list[ABBoot] = []
    for path in measured:
        try:
            source = open_source(path)
        except SourceError as error:
            problems.append(str(error))
            continue
        boots += ab_boots(source.meta, analyze_source(source, profile))
    outcomes = check_predictions(chosen[1], boots, profile.order)
    return AdviceFound(chosen[0], tuple(chosen[1]), tuple(outcomes), tuple(problems),
                       tuple(checks))


def recommendation_text(number: int, rec: Recommendation, outcomes: Sequence[Outcome],
                        live: bool, check: str = "") -> Text:
    """One recommendation as the list shows it (`check`: the command that measures it on
    this board, or why it cannot be applied there)."""
    text = Text()
    span = f" (median of {rec.boots} boots, {rec.low_ms:.0f}-{rec.high_ms:.0f})" \
        if rec.boots > 1 and rec.low_ms is not None and rec.high_ms is not None else ""
    text.append(f"{number}. {rec.title}: {rec.predicted_ms:.0f} ms{span}", style="bold")
    if rec.setting:
        text.append(f"  [{rec.setting}]")
    text.append(f"\n   {rec.detail}")
    for line, quoted in rec.evidence:
        text.append(f"\n   line {line}: ", style="dim")
        text.append(quoted)
    for outcome in outcomes:
        measured = outcome.measured_ms
        versus = "" if measured is None else \
            f" (predicted {rec.predicted_ms:.0f} ms, measured {measured:.0f} ms)"
        text.append(f"\n   A/B {outcome.run}: {outcome.text()}{versus}", style="bold")
    if check:
        text.append(f"\n   {'' if check.startswith('bootlab cannot') else 'check: '}{check}",
                    style="dim")
    if rec.variant is None:
        text.append("\n   a build or image change: no setting to measure with an A/B run",
                    style="dim italic")
    elif live:
        text.append(f"\n   Enter: A/B run base: against {rec.variant}"
                    + (", settings saved" if rec.persist else ""), style="italic")
    return text


class AdviceScreen(Screen[Recommendation | None]):
    """Recommendations, ranked; Enter returns the one to measure."""

    DEFAULT_CSS = """
    AdviceScreen {
        & > #advice-head { height: auto; padding: 0 1; background: $panel; }
        & > OptionList { height: 1fr; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "measure", "A/B run", id="advice-measure", priority=True,
                tooltip="measure the highlighted recommendation with an A/B run (live only)"),
        Binding("escape,q", "close", "Back", id="advice-close", tooltip="back to the console"),
    ]

    @dataclass
    class Loaded(Message):
        """The recommendations were read (on a worker thread)."""

        found: AdviceFound

    def __init__(self, paths: Sequence[Path], folder: Path, profile: Profile,
                 live: bool, settings: Sequence[Setting] = ()) -> None:
        super().__init__()
        self.paths = list(paths)
        self.folder = folder
        self.profile = profile
        self.live = live
        self.settings = list(settings)
        self.recommendations: list[Recommendation] = []

    def compose(self) -> ComposeResult:
        """A headline, the list, the keys."""
        yield Static("reading the boot ...", id="advice-head")
        yield OptionList(id="advice-list")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Read the recommendations off the UI thread."""
        self.query_one(OptionList).focus()
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="advice")
    def _load(self) -> None:
        self.post_message(self.Loaded(load_advice(self.paths, self.folder, self.profile,
                                                  self.settings)))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        found = message.found
        self.recommendations = list(found.recommendations)
        head = [f"what to change next, ranked by predicted saving: {found.source.name}"
                if found.source else "no boot recorded yet that started a kernel: boot the "
                                     "board (R reboots it), then look again"]
        if not self.live:
            head.append("a replay has no board to measure on: Enter is off here "
                        "(`bootlab PORT` measures them live)")
        head += found.problems
        self.query_one("#advice-head", Static).update("\n".join(head))
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(recommendation_text(
            number, rec, [o for o in found.outcomes if o.recommendation is rec], self.live,
            check)) for number, (rec, check) in enumerate(
                zip(self.recommendations, found.checks or [""] * len(self.recommendations),
                    strict=True), start=1)])
        if found.source is not None and not self.recommendations:
            options.add_option(Option("nothing to advise: no known cost found in this boot",
                                      disabled=True))
        if self.recommendations:
            options.highlighted = 0
        self.refresh_bindings()

    @on(OptionList.OptionHighlighted)
    def _highlighted(self) -> None:
        self.refresh_bindings()

    def _highlighted_recommendation(self) -> Recommendation | None:
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.recommendations):
            return None
        return self.recommendations[index]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter measures only live, and only a recommendation with a setting to A/B."""
        if action == "measure":
            rec = self._highlighted_recommendation()
            return True if self.live and rec is not None and rec.variant else None
        return True

    def action_measure(self) -> None:
        """Back to the main screen with the recommendation to measure."""
        self.dismiss(self._highlighted_recommendation())

    def action_close(self) -> None:
        """Back to the main screen."""
        self.dismiss(None)
