"""The compare screen over the bundled boots: the deltas, the waterfall and the statistics
agree with `bootlab compare` (core/analysis/compare.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from support.pilot import wait_until
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import DataTable, Static, TabbedContent

from bootlab.core.analysis import compare
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.sources import open_source
from bootlab.ui.app import BootlabApp
from bootlab.ui.launch import replay_app
from bootlab.ui.screens.compare import CompareScreen
from bootlab.ui.screens.help import HelpScreen
from bootlab.ui.widgets.waterfall import Lane, Waterfall, axis, phase_spans, time_order

LINUX = load_profile("linux")


def expected_columns(paths: list[Path], group: bool = True,
                     reference: str = "first-byte") -> list[compare.Column]:
    """The columns `bootlab compare` builds for these sessions."""
    return compare.build_columns(compare_entries(paths, reference), group=group)


def compare_entries(paths: list[Path], reference: str) -> list[compare.Entry]:
    """The entries `bootlab compare` builds (inspect.run_compare): every boot of each file."""
    entries = []
    for path in paths:
        source = open_source(path)
        analysis = analyze(source.data, LINUX, source.line_time)
        entries += [compare.Entry(path.name, str(source.meta.get("label") or ""), boot,
                                  reference) for boot in analysis.boots]
    return entries


async def open_compare(app: BootlabApp, pilot: Pilot[None]) -> CompareScreen:
    await pilot.press("f3")
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    await wait_until(pilot, lambda: screen.columns, "the comparison")
    return screen


def rendered(static: Static, width: int = 200) -> str:
    """A Static's content as plain text, `width` columns wide."""
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(static.content)
    return console.export_text()


def table_cells(screen: CompareScreen) -> dict[str, list[str]]:
    table = screen.query_one("#compare-table", DataTable)
    return {str(key.value): [cell.plain for cell in table.get_row(key)] for key in table.rows}


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_f3_without_marks_compares_every_session_by_label(folder: Path,
                                                               size: tuple[int, int]) -> None:
    app = replay_app(sorted(folder.glob("*.jsonl"))[0], speed=0.0, sessions=folder)
    async with app.run_test(size=size) as pilot:
        screen = await open_compare(app, pilot)
        expected = expected_columns(sorted(folder.glob("*.jsonl")))
        assert [c.name for c in screen.columns] == ["default", "quiet", "bootdelay0"]
        assert [(c.name, c.values) for c in screen.columns] == \
            [(c.name, c.values) for c in expected]
        table = screen.query_one("#compare-table", DataTable)
        assert [str(c.label) for c in table.columns.values()] == \
            ["milestone", "default ×2", "quiet ×2", "bootdelay0 ×2"]
        login = table_cells(screen)["login"]
        base = expected[0].summary("login")
        quiet = expected[1].summary("login")
        assert base is not None and quiet is not None
        assert login[1] == f"{base.median:.3f}"
        assert login[2] == f"{quiet.median:.3f} {quiet.median - base.median:+.3f}"
        title = str(screen.query_one("#compare-title", Static).render())
        assert "6 boots" in title and "3 columns" in title


async def test_deltas_list_milestones_in_time_order(folder: Path) -> None:
    """Down the deltas, each column's medians rise (as `analyze` lists a boot's): the root
    file system mounted after the kernel is done, not in the profile's order."""
    app = replay_app(sorted(folder.glob("*.jsonl"))[0], speed=0.0, sessions=folder)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_compare(app, pilot)
        rows = list(table_cells(screen))
        assert rows == screen.order and rows.index("kernel_done") < rows.index("root_mounted")
        timed = [m for m in rows if compare.is_time(m)]
        assert rows[:len(timed)] == timed               # then each phase's length
        assert all(m.startswith("phase:") for m in rows[len(timed):])
        for column in screen.columns:
            times = [s.median for m in timed if (s := column.summary(m)) is not None]
            assert times == sorted(times), column.name


async def test_views_grouping_and_reference(folder: Path) -> None:
    paths = sorted(folder.glob("*.jsonl"))
    app = replay_app(paths[0], speed=0.0, sessions=folder)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_compare(app, pilot)
        tabs = screen.query_one(TabbedContent)
        await pilot.press("2")
        assert tabs.active == "waterfall"
        waterfall = screen.query_one(Waterfall)
        assert [lane.name for lane in waterfall.lanes] == \
            ["default ×2", "quiet ×2", "bootdelay0 ×2"]
        drawn = str(waterfall.render())
        assert "0 s" in drawn and "bootdelay0 ×2" in drawn and "█" in drawn
        await pilot.press("3")
        assert tabs.active == "statistics"
        said = rendered(screen.query_one("#compare-statistics", Static))
        expected = expected_columns(paths)
        for sentence in compare.sentences(expected, screen.order):
            assert " ".join(sentence.split()) in " ".join(said.split())
        assert "95% confidence interval" in said
        await pilot.press("g")  # one column per boot
        assert len(screen.columns) == 6 and not screen.group
        assert "one per boot" in str(screen.query_one("#compare-title", Static).render())
        await pilot.press("g", "r")  # grouped again, times from Starting kernel
        assert screen.reference == "starting_kernel"
        kernel = expected_columns(paths, reference="starting_kernel")
        assert [(c.name, c.values) for c in screen.columns] == \
            [(c.name, c.values) for c in kernel]
        assert kernel[0].values["starting_kernel"] == [0.0, 0.0]
        await pilot.press("r", "1")
        assert screen.reference == "first-byte" and tabs.active == "deltas"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.sections[0][0] == "Compare screen (F3)"
        await pilot.press("escape", "escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_unreadable_sessions_are_named_and_the_rest_compared(folder: Path) -> None:
    notes: list[Message] = []
    paths = [*sorted(folder.glob("*-quiet-*")), folder / "gone.jsonl"]
    app = replay_app(paths[0], speed=0.0, sessions=folder)
    async with app.run_test(size=(80, 24), message_hook=notes.append) as pilot:
        await app.push_screen(CompareScreen(folder, paths))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_until(pilot, lambda: screen.columns, "the comparison")
        assert [c.name for c in screen.columns] == ["quiet"]
        said = rendered(screen.query_one("#compare-statistics", Static))
        assert "No confidence intervals" in said
    assert any(isinstance(m, Notify) and "gone.jsonl" in m.notification.message
               for m in notes)


def test_phase_spans_follow_time_not_profile_order() -> None:
    lane = Lane("a", {"init": 4.6, "root_mounted": 5.0, "kernel_done": 4.5, "linux": 3.0})
    assert phase_spans(lane) == {"linux": (0.0, 3.0), "kernel_done": (3.0, 4.5),
                                 "init": (4.5, 4.6), "root_mounted": (4.6, 5.0)}
    other = Lane("b", {"login": 6.0, "linux": 2.0})
    assert time_order(["linux", "root_mounted", "kernel_done", "init", "login"],
                      [lane, other]) == ["linux", "kernel_done", "init", "root_mounted", "login"]


@pytest.mark.parametrize(("total", "width", "expected"), [
    (5.4, 30, "0 s" + " " * 8 + "2 s" + " " * 8 + "4 s     "),
    (5.4, 70, "0 s" + "".join(f"{n} s".rjust(13 if n > 1 else 12) for n in range(1, 6))
     + "   "),
    (5.4, 12, "0 s" + " " * 9),  # 5 s would not fit
    (0.0, 4, "    "),
])
def test_axis(total: float, width: int, expected: str) -> None:
    assert axis(total, width) == expected
