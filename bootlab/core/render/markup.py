"""Markup the reports share (`report`, `tune_report`): device and user text made inert in
Markdown (`md`, `md_code`, `fenced`), and the HTML page's style and Content-Security-Policy,
its tables (every cell escaped there) and the legend of the bar colours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from bootlab.core.capture.text import clean
from bootlab.core.render.svg import COLOURS, escape

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~#!])")


def md(text: str) -> str:
    """Device or user text as inert Markdown: one line, punctuation backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(clean(text).split()))


def md_code(text: str) -> str:
    """Device text as a Markdown code span (spacing kept, nothing interpreted)."""
    text = clean(text)
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str) -> str:
    """A fenced block whose fence no backtick run in `text` can close."""
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}\n"


CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1000px;color:#222;
 padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.2em .5em;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
td code{white-space:pre-wrap;overflow-wrap:break-word}
.meta{color:#666}.notice{color:#8a4b00}svg.chart{max-width:100%;height:auto;display:block}
.saving{font-weight:bold;color:#2c6e3f}.wide{overflow-x:auto}td.n{white-space:nowrap}
.trust{font-weight:bold;color:#8a4b00}
.legend{font-size:.85em;color:#444}.key{display:inline-block;width:.9em;height:.9em;
 margin:0 .3em 0 .8em;vertical-align:middle;border-radius:2px}
""" + "".join(f".k-{kind}{{background:{colour}}}" for kind, colour in COLOURS.items())
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def html_table(head: Sequence[str], rows: Iterable[Sequence[str]], numeric: set[int],
               code: int | None = None) -> str:
    """An HTML table (column `code` as code); every cell is escaped here."""
    def cell(i: int, text: str) -> str:
        if i == code:
            return f"<td><code>{escape(text)}</code></td>" if text else "<td></td>"
        return f'<td class="n">{escape(text)}</td>' if i in numeric else f"<td>{escape(text)}</td>"

    out = ['<div class="wide"><table><thead><tr>'
           + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    out += ["<tr>" + "".join(cell(i, c) for i, c in enumerate(row)) + "</tr>" for row in rows]
    out.append("</tbody></table></div>")
    return "\n".join(out)


def legend(kinds: Iterable[str]) -> str:
    """What the bar colours mean."""
    return '<p class="legend">' + " ".join(
        f'<span class="key k-{escape(k)}"></span>{escape(k)}' for k in kinds) + "</p>"
