"""Our stylesheets are well formed: every block they open, they close.

An unclosed ``@media (max-width: 640px) {`` once swallowed every rule after
it, so the interviewer's keystroke view and the editor's error line were
styled only on narrow screens; browsers say nothing about it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "web" / "static"
OURS = sorted(p for p in STATIC.rglob("*.css") if "vendor" not in p.parts)


def test_there_are_stylesheets_to_check() -> None:
    assert any(p.name == "site.css" for p in OURS)


@pytest.mark.parametrize("path", OURS, ids=lambda p: str(p.relative_to(STATIC)))
def test_every_block_is_closed_where_it_should_be(path: Path) -> None:
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)  # braces in comments do not count
    text = re.sub(r"\"[^\"]*\"|'[^']*'", '""', text)  # nor in strings (content: "{")
    depth = 0
    for number, line in enumerate(text.splitlines(), 1):
        for char in line:
            depth += {"{": 1, "}": -1}.get(char, 0)
            assert depth >= 0, f"{path.name}:{number}: a '}}' closes nothing"
    assert depth == 0, f"{path.name}: {depth} block(s) never closed"
