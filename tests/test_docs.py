"""The README stays a front page (what bootlab is, the two commands, a walkthrough, links) and
every file it links to exists; the manual in docs/ is checked by `mkdocs build --strict`
(scripts/test), which fails on a broken link or anchor there."""

from __future__ import annotations

import re
from urllib.parse import unquote

from support.paths import ROOT

README_LIMIT = 15_000
"""Bytes: the rest of the manual lives in docs/."""


def test_the_readme_is_a_front_page() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= README_LIMIT
    assert "./scripts/bootlab" in text and "./scripts/test" in text
    assert "## A morning at the bench" in text


def test_every_file_the_readme_links_to_exists() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [unquote(link.split("#")[0]) for link in re.findall(r"\]\(([^)\s]+)\)", text)
               if not link.startswith(("http://", "https://", "#"))]
    assert targets, "the README links to the manual"
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert not missing, missing
    pages = {path.name for path in (ROOT / "docs").glob("*.md")}
    linked = {target.removeprefix("docs/") for target in targets if target.startswith("docs/")}
    assert pages <= linked, f"pages the README does not link: {sorted(pages - linked)}"
