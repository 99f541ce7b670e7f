"""Input typed at a password prompt is a secret: sessions keep only its length.

Typing is secret from the moment a key is typed at a line matching the secret prompt (by
default `Password:`, `passphrase for ...:`; `--secret-prompt REGEX` for others) until that
input ends: Enter, Ctrl-C or Ctrl-D. So a board that echoes `*` per key, or answers late,
still gets every key of the password redacted.
"""

from __future__ import annotations

import re

DEFAULT_SECRET_PROMPT = re.compile(r"(?i)pass(?:word|phrase)[^\n]{0,20}:\s*$")
"""The line a password is typed at (searched in the cleaned prompt line)."""
_ENDS_INPUT = (b"\r", b"\n", b"\x03", b"\x04")


class SecretInput:
    """Which typed bytes are secret."""

    def __init__(self, prompt: re.Pattern[str] | None = None) -> None:
        self.prompt = prompt or DEFAULT_SECRET_PROMPT
        self._active = False

    def typed(self, shown: str, data: bytes) -> bool:
        """Whether `data`, typed now, is secret.

        Args:
            shown: the (cleaned) line the board shows as `data` is typed: its prompt.
            data: the bytes typed.
        """
        if not self._active and self.prompt.search(shown) is not None:
            self._active = True
        secret = self._active
        if secret and any(end in data for end in _ENDS_INPUT):
            self._active = False
        return secret
