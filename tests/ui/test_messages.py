"""The session's events reach the app as Textual messages of the same name, which stay on the
screen they were posted to (a bubbling copy would reach the app and be handled twice)."""

from __future__ import annotations

from typing import get_args

from bootlab.session import events
from bootlab.ui.messages import WRAPPERS, poster


def test_every_session_event_has_a_message_that_stays_on_its_screen() -> None:
    posted = set(get_args(events.Event))
    assert set(WRAPPERS) == posted and len(posted) >= 20
    for event, message in WRAPPERS.items():
        assert message.__name__ == event.__name__
        assert not message.bubble, message


def test_poster_wraps_each_event_for_the_pump_it_posts_to() -> None:
    class Pump:
        def __init__(self) -> None:
            self.got: list[object] = []

        def post_message(self, message: object) -> bool:
            self.got.append(message)
            return True

    pump = Pump()
    event = events.PortLost("unplugged")
    poster(pump)(event)  # type: ignore[arg-type]
    (message,) = pump.got
    assert type(message).__name__ == "PortLost" and message.event is event  # type: ignore[attr-defined]
    assert type(message).handler_name == "on_port_lost"  # type: ignore[attr-defined]
