"""Every package's recorded mutation analysis belongs to the package as it is now, and meets the target.

``solutions/mutants.toml`` (grader/mutants.py) is written by ``python -m
grader mutants PACKAGE --write``. Re-running every mutant is too slow for
``make test``; what is checked here, without a sandbox, is that the record
was computed for the current version of the package (ignoring the record
itself), that its counts add up, that every equivalent mutant says why, and
that the mutation score is at least the target (95%).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.mutants import record_problems
from grader.package import MUTANTS_RECORD
from grader.package_load import discover_packages

REPO = Path(__file__).resolve().parents[2]
RECORDED = [p for p in discover_packages(REPO / "challenges") if (p / MUTANTS_RECORD).is_file()]


def test_some_packages_record_their_mutation_analysis() -> None:
    assert RECORDED, f"no package has {MUTANTS_RECORD}"


@pytest.mark.parametrize("folder", RECORDED, ids=[f"{p.parent.name}/{p.name}" for p in RECORDED])
def test_the_record_is_current_and_meets_the_target(folder: Path) -> None:
    problems = record_problems(folder)
    assert not problems, "\n".join([f"{folder.parent.name}/{folder.name}:", *problems])
