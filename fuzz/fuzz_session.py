"""Fuzz the session loader: any file is a session (whatever of it is readable) or SessionError."""

from __future__ import annotations

import atheris

with atheris.instrument_imports():
    from _common import SESSION_HEADER, main, scratch_file

    from bootlab.core.capture.session import SessionError, load_session

_FILE = scratch_file("s.jsonl")


def one_input(data: bytes) -> None:
    """Load `data` as a session file (half the time behind a valid header)."""
    if data[:1] and data[0] & 1:
        data = SESSION_HEADER + data[1:]
    _FILE.write_bytes(data)
    try:
        session = load_session(_FILE)
    except SessionError as error:
        assert str(_FILE) in str(error), "the error does not name the file"
        return
    stream = session.data
    offsets, times = session.chunk_offsets()
    assert len(offsets) == len(times) == len(session.chunks)
    assert sum(len(chunk) for _, chunk in session.chunks) == len(stream)
    assert all(isinstance(notice, str) for notice in session.notices)
    assert isinstance(session.meta, dict) and isinstance(session.label, str)


if __name__ == "__main__":
    main(one_input, _FILE)
