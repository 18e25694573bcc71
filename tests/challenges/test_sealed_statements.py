"""A sealed package's statement names exactly the imports its code may make.

The grader refuses, before anything runs, a sealed package's code that imports
a module outside the allow-list (grader/source_rules.py). A candidate reads
the statement, not the source of the grader, so the statement must list every
module the allow-list admits: a list that says "..." led a correct solution to
be refused for ``import hashlib`` (issue 27), and one that omits a module it
admits sends candidates to write by hand what the standard library has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.package_load import discover_packages, load_package_dir
from grader.source_rules import importable

REPO = Path(__file__).resolve().parents[2]
SEALED = [p for p in discover_packages(REPO / "challenges") if load_package_dir(p).rules.sealed]


def test_some_packages_are_sealed() -> None:
    assert SEALED


@pytest.mark.parametrize("folder", SEALED, ids=[f"{p.parent.name}/{p.name}" for p in SEALED])
def test_the_statement_lists_every_import_the_seal_admits(folder: Path) -> None:
    rules = load_package_dir(folder).rules
    statement = (folder / "statement.md").read_text(encoding="utf-8")
    spans = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", statement))
    missing = [module for module in importable(rules).split(", ") if module not in spans]
    assert not missing, f"{folder.name}: the statement does not name these imports the seal admits: {', '.join(missing)}"
