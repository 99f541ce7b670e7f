"""Bootgraphs of initcall_debug output: the longest initcalls and probes as bars on the printk
time axis, for the terminal (`chart_text`) and for HTML reports (`chart_svg`)."""

from __future__ import annotations

from collections.abc import Sequence

from bootlab.core.analysis.initcalls import Initcall, duration_text, top
from bootlab.core.render.svg import Bar, svg_chart, text_chart


def _bars(calls: Sequence[Initcall], limit: int) -> tuple[list[Bar], tuple[float, float]]:
    """The `limit` longest calls as bars in start order, and the axis: from 0 (printk time 0)
    to the end of the last call.

    Without printk times the calls are laid end to end in log order.
    """
    placed: list[tuple[Initcall, float]] = []
    if all(call.start_s is not None for call in calls):
        placed = [(call, call.start_s or 0.0) for call in calls]
    else:
        t = 0.0
        for call in calls:
            placed.append((call, t))
            t += call.duration_us / 1e6
    chosen = {id(call) for call in top(calls, limit)}
    bars = [Bar(call.label, start, start + call.duration_us / 1e6, call.kind,
                duration_text(call.duration_us))
            for call, start in sorted(placed, key=lambda p: (p[1], p[0].line))
            if id(call) in chosen]
    hi = max((start + call.duration_us / 1e6 for call, start in placed), default=1.0)
    return bars, (0.0, hi)


def chart_text(calls: Sequence[Initcall], width: int = 80, limit: int = 20) -> str:
    """A bootgraph for the terminal: the `limit` longest calls on the printk time axis.

    Every line is at most `width` characters (block characters draw the bars).
    """
    bars, axis = _bars(calls, limit)
    return text_chart(bars, width, axis, unit="s")


def chart_svg(calls: Sequence[Initcall], limit: int = 30, title: str = "initcalls") -> str:
    """The same bootgraph as an SVG element (one `<rect>` per call shown)."""
    bars, axis = _bars(calls, limit)
    return svg_chart(bars, axis, title)
