"""The footer forgets the keys it composed before (Textual issue #6666 kept every generation)."""

from __future__ import annotations

import gc

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
