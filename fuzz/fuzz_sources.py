"""Fuzz log import: grabserial, dmesg, journalctl, plain (and detection), then the analysis."""

from __future__ import annotations

import math

import atheris

with atheris.instrument_imports():
    from _common import main, scratch_file

    from bootlab.core.analysis.loading import analyze_source
    from bootlab.core.analysis.profiles import load_profile
    from bootlab.core.capture.sources import KINDS, SourceError, open_source
    from bootlab.core.render import tables

_FILE = scratch_file("boot.log")
_PROFILE = load_profile("linux")
_CHOICES = (None, *(kind for kind in KINDS if kind != "session"))


def one_input(data: bytes) -> None:
    """Import `data` as the kind the first byte picks (or detected) and analyse it."""
    kind = _CHOICES[data[0] % len(_CHOICES)] if data else None
    _FILE.write_bytes(data[1:])
    try:
        source = open_source(_FILE, kind)
    except SourceError as error:
        assert str(_FILE) in str(error), "the error does not name the file"
        return
    assert source.kind in KINDS
    analysis = analyze_source(source, _PROFILE)
    for milestone in analysis.milestones:
        for value in (milestone.host_s, milestone.kernel_s):
            assert value is None or math.isfinite(value)
    tables.to_text(analysis, None)
    tables.to_json(analysis, {"path": str(_FILE)}, None)
    if source.line_time is not None:
        for number in range(1, min(analysis.lines, 50) + 1):
            t = source.line_time(number, 0)
            assert t is None or math.isfinite(t)


if __name__ == "__main__":
    main(one_input, _FILE)
