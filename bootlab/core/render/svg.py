"""Bars on a time axis (boot waterfalls, bootgraphs): as inline SVG for reports, as text.

Both renderings take the same `Bar`s and axis. The SVG is written by hand: every piece of text
in it goes through `escape`, so device text (initcall names, labels) can never become markup,
and each bar is exactly one `<rect>` (axis and grid are lines). The text rendering uses block
characters with eighth-cell resolution, cleans its labels (`text.clean`) so they cannot drive
a terminal, and never exceeds the width it is given.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bootlab.core.capture.text import clean

COLOURS = {
    "firmware": "#8d6e97", "bootloader": "#d9892b", "kernel": "#3a78c9",
    "userspace": "#3c9a5c", "initcall": "#3a78c9", "probe": "#a0569e",
}
"""Bar fill per kind (a milestone stage, or initcall/probe); others are grey."""
DEFAULT_COLOUR = "#808080"
MIN_TEXT_WIDTH = 30
"""The narrowest text chart drawn."""
_PARTIAL = " ▏▎▍▌▋▊▉"
"""Left-aligned blocks of 0..7 eighths of a cell."""
_NOTE_CHARS = 12
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class Bar:
    """One row: a labelled span of time."""

    label: str
    start: float
    end: float
    kind: str = ""
    """Picks the colour: a milestone stage, "initcall" or "probe"."""
    note: str = ""
    """Shown beside the bar (its duration)."""


def escape(text: str) -> str:
    """Text made safe as XML/HTML character data or a quoted attribute value.

    Markup characters become entities; characters XML cannot hold (C0 and C1 controls, lone
    surrogates) become U+FFFD.
    """
    return html.escape(_XML_INVALID.sub("\ufffd", text), quote=True)


def nice_step(span: float, most: int) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) giving at most `most` intervals."""
    raw = max(span, 1e-9) / max(most, 1)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0):
        if factor * magnitude >= raw * (1 - 1e-9):
            return factor * magnitude
    return 10.0 * magnitude


def ticks(lo: float, hi: float, most: int) -> list[float]:
    """Round times between lo and hi, at most `most` + 1 of them."""
    step = nice_step(hi - lo, most)
    first = math.ceil(lo / step - 1e-9)
    out = []
    index = first
    while index * step <= hi + step * 1e-9:
        out.append(index * step)
        index += 1
    return out


def tick_label(t: float, step: float) -> str:
    """A tick's time with as many decimals as the step needs."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return f"{t:.{decimals}f}"


def _span(axis: tuple[float, float]) -> tuple[float, float]:
    lo, hi = axis
    return lo, (hi - lo if hi > lo else 1.0)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _cell_text(text: str) -> str:
    """Device text for a fixed-width cell: cleaned, tabs as spaces."""
    return clean(text).replace("\t", " ")


def _text_bar(bar: Bar, lo: float, span: float, cells: int) -> str:
    scale = cells / span
    start = (bar.start - lo) * scale
    end = (bar.end - lo) * scale
    cell = min(max(int(start), 0), cells - 1)
    eighths = max(1, round((min(end, cells) - cell) * 8))
    full, rest = divmod(min(eighths, (cells - cell) * 8), 8)
    return " " * cell + "█" * full + (_PARTIAL[rest] if rest else "")


def text_chart(bars: Sequence[Bar], width: int, axis: tuple[float, float],
               unit: str = "s") -> str:
    """Bars drawn with block characters, every line at most `width` characters.

    Args:
        bars: the rows, top to bottom.
        width: the line length not to exceed (at least MIN_TEXT_WIDTH).
        axis: the times at the left and right ends of the bar area.
        unit: the axis unit, shown under the labels.

    Raises:
        ValueError: `width` is below MIN_TEXT_WIDTH.
    """
    if width < MIN_TEXT_WIDTH:
        raise ValueError(f"a chart needs at least {MIN_TEXT_WIDTH} columns, not {width}")
    if not bars:
        return "(nothing to draw)\n"
    lo, span = _span(axis)
    labels = [_cell_text(bar.label) for bar in bars]
    notes = [_fit(_cell_text(bar.note), _NOTE_CHARS) for bar in bars]
    note_w = max(len(note) for note in notes)
    label_w = min(max(len(label) for label in labels), max(8, width // 3))
    label_w = max(4, min(label_w, width - note_w - 12))
    cells = width - label_w - note_w - 2
    lines = [f"{_fit(label, label_w):<{label_w}} "
             f"{_text_bar(bar, lo, span, cells):<{cells}} {note:>{note_w}}".rstrip()
             for bar, label, note in zip(bars, labels, notes, strict=True)]
    axis_line, label_line = _text_axis(lo, span, cells)
    lines.append(" " * (label_w + 1) + axis_line)
    lines.append(f"{_fit(unit, label_w):>{label_w}} {label_line}".rstrip())
    return "\n".join(lines) + "\n"


def _text_axis(lo: float, span: float, cells: int) -> tuple[str, str]:
    """The axis under the bars (ticks as ┬) and the tick times placed under them."""
    step = nice_step(span, max(1, cells // 8))
    axis = ["─"] * cells
    labels = [" "] * cells
    free = 0
    for t in ticks(lo, lo + span, max(1, cells // 8)):
        position = min(round((t - lo) / span * cells), cells - 1)
        axis[position] = "┬"
        text = tick_label(t, step)
        if position >= free and position + len(text) <= cells:
            labels[position:position + len(text)] = text
            free = position + len(text) + 1
    return "".join(axis), "".join(labels)


_ROW = 20
_BAR = 14
_TOP = 26
_BOTTOM = 26
_NOTE_PX = 78
_CHAR_PX = 6.6
_LABEL_CHARS = 48


def _n(value: float) -> str:
    """A coordinate, short."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def svg_chart(bars: Sequence[Bar], axis: tuple[float, float], title: str,
              width: int = 960, unit: str = "s") -> str:
    """Bars as an `<svg>` element: one `<rect>` per bar, with its label, note and tooltip.

    Args:
        bars: the rows, top to bottom.
        axis: the times at the left and right ends of the plot area.
        title: the chart's title (also its accessible name).
        width: the width in pixels.
        unit: the axis unit.
    """
    lo, span = _span(axis)
    labels = [_fit(bar.label, _LABEL_CHARS) for bar in bars]
    label_px = min(width // 3, int(_CHAR_PX * max((len(t) for t in labels), default=4)) + 12)
    plot = max(width - label_px - _NOTE_PX - 8, 50)
    height = _TOP + _ROW * len(bars) + _BOTTOM

    def x(t: float) -> float:
        return label_px + (t - lo) / span * plot

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
           f'font-family="sans-serif" font-size="12">',
           f"<title>{escape(title)}</title>",
           f'<text x="0" y="16" font-weight="bold">{escape(title)}</text>']
    step = nice_step(span, 10)
    bottom = _TOP + _ROW * len(bars)
    for t in ticks(lo, lo + span, 10):
        out.append(f'<line x1="{_n(x(t))}" y1="{_TOP - 4}" x2="{_n(x(t))}" y2="{bottom}" '
                   'stroke="#d8d8d8" stroke-width="1"/>')
        out.append(f'<text x="{_n(x(t))}" y="{bottom + 16}" text-anchor="middle" '
                   f'fill="#555">{escape(tick_label(t, step))}</text>')
    out.append(f'<text x="{label_px + plot + 6}" y="{bottom + 16}" '
               f'fill="#555">{escape(unit)}</text>')
    for i, (bar, label) in enumerate(zip(bars, labels, strict=True)):
        y = _TOP + i * _ROW
        left = x(max(bar.start, lo))
        right = max(x(min(bar.end, lo + span)), left + 1.0)
        fill = COLOURS.get(bar.kind, DEFAULT_COLOUR)
        tip = f"{bar.label}: {bar.start:.6f} to {bar.end:.6f} {unit}" + (
            f" ({bar.note})" if bar.note else "")
        out.append(f'<text x="{label_px - 6}" y="{y + _BAR - 3}" '
                   f'text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect x="{_n(left)}" y="{y}" width="{_n(right - left)}" height="{_BAR}" '
                   f'fill="{fill}" rx="2"><title>{escape(tip)}</title></rect>')
        if bar.note:
            out.append(f'<text x="{label_px + plot + 6}" y="{y + _BAR - 3}" '
                       f'fill="#333">{escape(bar.note)}</text>')
    out.append("</svg>")
    return "\n".join(out)
