"""Every repository package can diagnose its known mistakes (grader/diagnose.py, issue 29).

No grading here: each wrong solution of ``solutions/expected.toml`` has its
author's words and a family, and ``solutions/signatures.toml`` still
describes the package (its probes and solution files are what it was
recorded on). Validation (test_packages_validate) grades every wrong
solution, on the probes this record says it fails and two it passes, and
grades it again whole when its fresh signature differs from the record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.diagnose import library, nearest, record_problems
from grader.package_load import discover_packages, load_package_dir
from grader.verdicts import Verdict

REPO = Path(__file__).resolve().parents[2]
PACKAGES = discover_packages(REPO / "challenges")
IDS = [f"{p.parent.name}/{p.name}" for p in PACKAGES]


@pytest.mark.parametrize("folder", PACKAGES, ids=IDS)
def test_every_wrong_solution_has_words_for_the_candidate_and_a_family(folder: Path) -> None:
    package = load_package_dir(folder)
    missing = [s.name for s in package.solutions if s.verdict != Verdict.ACCEPTED.value and not (s.diagnosis and s.family)]
    assert not missing, f"{folder.name}: no diagnosis or family for {', '.join(missing)}"
    for solution in package.solutions:
        # The words are the candidate's: never the file's name, which says the mistake to coaches.
        assert solution.name not in solution.diagnosis, f"{folder.name}/{solution.name}: the diagnosis names the file"


@pytest.mark.parametrize("folder", PACKAGES, ids=IDS)
def test_the_signatures_record_describes_the_package(folder: Path) -> None:
    package = load_package_dir(folder)
    problems = record_problems(package)
    assert not problems, "\n".join([f"{folder.parent.name}/{folder.name}:", *problems])
    assert library(package), f"{folder.name}: no wrong solution in the diagnosis library"


@pytest.mark.parametrize("folder", PACKAGES, ids=IDS)
def test_every_known_mistake_graded_as_a_candidate_is_named(folder: Path) -> None:
    """Each wrong solution's own failures name its mistake (alone, or among mistakes whose failures are the same).
    How often one left out is named by a sibling, by nothing or by another mistake is measured, not required
    (docs/grading-integrity.md, "Diagnosis")."""
    known = library(load_package_dir(folder))
    unnamed = [k.name for k in known if not ((found := nearest(k.failed, known)) and k.family in found.families)]
    assert not unnamed, f"{folder.name}: not named by its own failures (more than four mistakes fail alike?): {', '.join(unnamed)}"
