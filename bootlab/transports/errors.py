"""The one error the transports raise, so callers handle every port failure in one place."""

from __future__ import annotations


class PortError(Exception):
    """The port could not be opened or stopped working; the message says what to do."""
