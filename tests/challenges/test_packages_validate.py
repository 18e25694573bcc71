"""Every challenge package passes check_challenges' validation in the real sandbox.

Reference 100% on public and hidden probes, deterministic over two runs,
starter below 100%, every shipped solution gets its stated verdict, all
inside the package's limits (grader/validate.py). One test per package and
real backend (bwrap and docker in CI: production grades in docker, so a
package that only works under bwrap must fail here), so a failure names the
package and the backend and prints the whole report.

The backends share each package's validation out (grader/validate.py:
``Share``): each runs the reference, the seal and every solution that must
be accepted; the starter and the failing solutions are dealt out between
them. The first records the reference from one run and the second must agree
with that record, which proves determinism and backend agreement at once.
So one test runs both parts, one after the other, in
``tests.helpers.BACKEND_ORDER`` (docker, production's backend, first), and
its failure names each backend whose part failed, with its whole report.
(Two tests in an ``xdist_group`` would not do: pytest-xdist 3.8 marks a
group by rewriting ``item._nodeid``, which pytest 9 no longer reads, so the
two parts ran side by side on two workers and the second, finding no
record yet, ran the reference twice.)

Each wrong solution that ``solutions/signatures.toml`` describes is graded by
its record (grader/validate.py, ``by_record``): on the probes a whole grading
of this very package and solution failed (``grader check --fresh
--write-signatures`` wrote it; tests/challenges/test_diagnoses.py fails a
record that is not current) and two it passed, on the backend it was dealt
to. So the suite shows that each is still rejected for the same reasons, in
a third of the probe runs; one whose grading differs is graded again whole
and judged on that. ``grader check`` grades every solution on every probe.

A package that passed before on the same version, platform code, runtime and
backend is not validated again (grader/validation_cache.py; its key is tested
in tests/grader/test_validation_cache.py): a second ``make test`` re-validates
only what changed. A fresh clone has no record and validates everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.package_load import discover_packages
from grader.tracks import discover_tracks, load_track
from grader.validate import Share, validate_package
from sandbox import get_backend
from tests.helpers import ordered_backends

REPO = Path(__file__).resolve().parents[2]
CATALOGUE = REPO / "challenges"
PACKAGES = discover_packages(REPO / "challenges") + discover_packages(REPO / "tests" / "fixtures" / "packages")


def test_the_catalogue_is_not_empty() -> None:
    assert len(discover_packages(REPO / "challenges")) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_package_is_valid(folder: Path) -> None:
    backends = ordered_backends()
    # The catalogue's packages must hold a coverage table; the fixtures exist to test the grader, not to teach.
    required = folder.is_relative_to(CATALOGUE)
    failures = []
    for index, backend in enumerate(backends):
        # The later part runs even when the first failed: its report says whether the other backend agrees.
        report = validate_package(
            folder, get_backend(backend), remember=True, share=Share(index, len(backends)), require_coverage=required, by_record=True
        )
        if not report.ok:
            failures.append("\n".join([report.name, f"backend: {backend}", *report.lines]))
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("folder", discover_tracks(REPO / "challenges"), ids=lambda p: p.name)
def test_track_lists_exactly_its_challenges(folder: Path) -> None:
    track = load_track(folder)
    present = {p.name for p in discover_packages(folder.parent) if p.parent == folder}
    assert set(track.order) == present, f"{folder}/track.toml order differs from the packages: {set(track.order) ^ present}"
