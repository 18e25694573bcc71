"""Every repository package says, for each rule of its statement and each input class it allows, which probe tests it.

The same check ``check_challenges`` makes before any probe runs
(grader/validate.py), here without a sandbox, so a statement edited under
its table or a probe added without a purpose fails in seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.coverage import coverage_problems, package_coverage
from grader.package_load import discover_packages, load_package_dir

REPO = Path(__file__).resolve().parents[2]
PACKAGES = discover_packages(REPO / "challenges")


@pytest.mark.parametrize("folder", PACKAGES, ids=[f"{p.parent.name}/{p.name}" for p in PACKAGES])
def test_the_package_holds_a_coverage_table_that_matches_its_statement_and_probes(folder: Path) -> None:
    package = load_package_dir(folder)
    entries = package_coverage(package.files, str(folder))
    assert entries is not None, f"{folder.name}: no coverage.toml"
    assert not coverage_problems(entries, package.statement, package.hidden_probes, package.public_probes)
    # Both kinds: the statement's rules, and the inputs it allows that a solution could mishandle.
    assert {e.kind for e in entries} == {"rule", "input"}, f"{folder.name}: a table of rules only or of inputs only"
