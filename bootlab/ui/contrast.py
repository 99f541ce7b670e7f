"""Colour contrast as WCAG 2 measures it: `readable` keeps a theme's colour legible where the
app draws it as text (a theme's green chosen for its dark background may be too pale on its own
light panel). Pure colour maths, so widgets may use it."""

from __future__ import annotations

from textual.color import Color

READABLE = 4.5
"""WCAG 2's least contrast ratio for normal text (level AA)."""


def luminance(colour: Color) -> float:
    """WCAG 2 relative luminance of an opaque colour, 0 (black) to 1 (white)."""
    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4
    return 0.2126 * linear(colour.r) + 0.7152 * linear(colour.g) + 0.0722 * linear(colour.b)


def contrast(first: Color, second: Color) -> float:
    """WCAG 2 contrast ratio of two opaque colours, 1 to 21."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def readable(colour: Color, ground: Color, ratio: float = READABLE) -> Color:
    """`colour` as text on `ground`: unchanged when it reads there at `ratio`, else blended
    toward black or white (whichever reads better on `ground`) in tenths until it does, so
    it keeps as much of its hue as legibility allows."""
    if contrast(colour, ground) >= ratio:
        return colour
    white, black = Color(255, 255, 255), Color(0, 0, 0)
    target = white if contrast(white, ground) > contrast(black, ground) else black
    for tenths in range(1, 10):
        mixed = colour.blend(target, tenths / 10)
        if contrast(mixed, ground) >= ratio:
            return mixed
    return target
