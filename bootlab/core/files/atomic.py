"""Replacing a file atomically: after a crash or a power cut the old file or the new one is
there, whole, never half of one.

The text goes to a temporary file in the same folder (a rename across file systems is not
atomic), which is synced to the disk before `os.replace` puts it in place; the folder is then
synced too, so the rename itself survives a power cut. The new file is readable by its owner
only unless a mode is given (state files may name the user's sessions and boards).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PRIVATE = 0o600
"""The mode of a file written without another one given."""


def write_atomic(path: Path, text: str | bytes, mode: int = PRIVATE) -> None:
    """Replace `path` (or create it) with `text` (UTF-8) or bytes, atomically, with
    permissions `mode`.

    Raises:
        OSError: the folder cannot be written (nothing is left behind in it).
    """
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(text.encode() if isinstance(text, str) else text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
