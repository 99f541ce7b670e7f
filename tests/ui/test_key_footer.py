"""The footer forgets the keys it composed before (Textual issue #6666 kept every generation)."""

from __future__ import annotations

import gc
import itertools

import pytest
from support.paths import example_sessions
from support.pilot import main_screen
from textual.widgets._footer import FooterKey

from bootlab.ui.launch import replay_app
from bootlab.ui.widgets.key_footer import KeyFooter

DEFAULT = example_sessions()[0]


async def test_moving_the_focus_leaves_no_old_keys_alive() -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        footer = main_screen(app).query_one(KeyFooter)
        for _ in range(8):  # the search bar takes the focus and gives it back: two recomposes
            await pilot.press("slash", "escape")
        await pilot.pause(0.2)
        shown = len(footer.query(FooterKey))
        watchers = getattr(footer, "__watchers")["compact"]
        assert shown > 5 and len(watchers) <= shown
        gc.collect()
        alive = [key for key in gc.get_objects() if isinstance(key, FooterKey)]
        assert len(alive) <= 2 * shown, (len(alive), shown)


async def test_removed_keys_are_not_kept_by_the_styles_cache() -> None:
    # Textual #6665: an lru_cache on a method keeps each widget's renderer (and its lines)
    from textual._styles_cache import StylesCache

    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(8):
            await pilot.press("slash", "escape")
        await pilot.pause(0.2)
        gc.collect()
        caches = sum(isinstance(o, StylesCache) for o in gc.get_objects())
        widgets = len(list(app.screen.walk_children())) + len(app.screen_stack) + 1
        assert caches <= widgets + 40, (caches, widgets)


async def test_the_phase_pane_keeps_only_current_renders() -> None:
    # Textual's DataTable re-keys its renders on every change and leaves the old ones cached
    from bootlab.ui.widgets.phase_panel import PhasePanel

    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = main_screen(app).query_one(PhasePanel)
        await pilot.pause(0.5)
        for _ in range(6):  # each opening and closing of the search bar resizes the pane
            await pilot.press("slash", "escape")
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        assert panel.row_count > 0
        cells = len(panel._cell_render_cache)
        assert cells <= (panel.row_count + 1) * (len(panel.columns) + 1), cells


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (160, 48)])
async def test_the_keys_shown_fit_whole_and_the_help_key_is_one_of_them(
        size: tuple[int, int]) -> None:
    app = replay_app(DEFAULT, speed=0.0)
    async with app.run_test(size=size) as pilot:
        footer = main_screen(app).query_one(KeyFooter)
        await pilot.pause()
        keys = list(footer.query(FooterKey))
        assert "?" in [key.key_display for key in keys] and "^p" in [k.key_display for k in keys]
        regions = sorted(key.region for key in keys)
        for key in keys:  # drawn whole: none scrolled out of sight or cut at the edge
            label = f"{key.key_display} {key.description}".strip()
            assert key.region.width >= len(label) and key.region.right <= size[0], label
        assert all(a.right <= b.x for a, b in itertools.pairwise(regions))
