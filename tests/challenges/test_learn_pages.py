"""Every challenge of the catalogue has its Learn page (learn.md), with the four parts a reader expects.

The Learn page (grader/learn.py, web/challenges/learn.py) shows the package's
learn.md above the common mistakes and the reference. It is content written
for each package: the idea, the reference walked through, what an
interviewer asks next, and where to read more. Checked here without a
sandbox: it exists, it renders without raw HTML, and it holds each heading.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.learn import LESSON_FILE
from grader.package_load import discover_packages
from web.challenges.rendering import markdown_to_html

REPO = Path(__file__).resolve().parents[2]
PACKAGES = discover_packages(REPO / "challenges")
HEADINGS = ("## The idea", "## The reference, walked through", "## What an interviewer asks next", "## Read more")


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_package_has_a_learn_page_with_its_four_parts(folder: Path) -> None:
    path = folder / LESSON_FILE
    assert path.is_file(), f"{folder.name} has no {LESSON_FILE}: write its Learn page"
    text = path.read_text(encoding="utf-8")
    positions = [text.find(heading + "\n") for heading in HEADINGS]
    assert all(p >= 0 for p in positions), f"{folder.name}/{LESSON_FILE} lacks {[h for h, p in zip(HEADINGS, positions) if p < 0]}"
    assert positions == sorted(positions), f"{folder.name}/{LESSON_FILE}: the parts are out of order"
    words = len(text.split())
    assert 300 <= words <= 1200, f"{folder.name}/{LESSON_FILE} has {words} words"
    links = re.findall(r"\]\((https?://[^)\s]+)\)", text.split("## Read more", 1)[1])
    assert links, f"{folder.name}/{LESSON_FILE}: Read more links nothing"
    assert "<script" not in str(markdown_to_html(text)).lower()
