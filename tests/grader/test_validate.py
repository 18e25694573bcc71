"""grader/validate.py: what a validation reports, the same whether it grades one or several at once.

Real sandbox (bwrap) on the add-numbers fixture; a copy whose expected.toml
lies about a solution must fail naming that solution.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.errors import PackageError
from grader.validate import validate_jobs, validate_package
from sandbox import get_backend
from tests.helpers import ADD_NUMBERS

WRONG_SOLUTION = "def add(a, b):\n    return a\n"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """add-numbers with a second solution whose stated verdict is wrong (it is a wrong answer, not accepted)."""
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    (folder / "solutions" / "first-only.py").write_text(WRONG_SOLUTION)
    expected = folder / "solutions" / "expected.toml"
    expected.write_text(expected.read_text() + '\n[first-only]\nverdict = "accepted"\nwhy = "It is not."\n')
    return folder


def test_the_report_is_the_same_graded_one_at_a_time_or_side_by_side(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reports = []
    for jobs in ("1", "3"):
        monkeypatch.setenv("GRADER_VALIDATE_JOBS", jobs)
        reports.append(validate_package(package, get_backend("bwrap")))
    serial, parallel = reports
    assert not serial.ok and not parallel.ok

    def without_timings(lines: list[str]) -> list[str]:
        return [line.split(";")[0] for line in lines]

    assert without_timings(parallel.lines) == without_timings(serial.lines)
    assert [line for line in parallel.lines if line.startswith("FAIL")] == [
        "FAIL solutions/first-only.py: verdict wrong_answer, expected accepted; failed: floats (wrong_answer), "
        "keeps_float16 (wrong_answer), integers (wrong_answer)"
    ]
    # The failing line is followed by the first failure's own message, so a
    # report read later (a CI log) says why, not only which probes.
    detail = parallel.lines[parallel.lines.index(next(line for line in parallel.lines if line.startswith("FAIL"))) + 1]
    assert detail.startswith("       first failure, 'floats': ") and "\n" not in detail
    assert "  ok solutions/float64.py: partial" in " ".join(parallel.lines)


def test_validate_jobs_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_VALIDATE_JOBS", "3")
    assert validate_jobs() == 3
    monkeypatch.setenv("GRADER_VALIDATE_JOBS", "0")
    assert validate_jobs() == 1
    monkeypatch.delenv("GRADER_VALIDATE_JOBS")
    assert 1 <= validate_jobs() <= 4
    monkeypatch.setenv("GRADER_VALIDATE_JOBS", "two")
    with pytest.raises(PackageError, match="GRADER_VALIDATE_JOBS must be a whole number, not 'two'"):
        validate_jobs()


def test_a_recorded_expectation_is_checked_by_one_run_that_must_agree_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With this version's expectations already recorded (an earlier run, maybe on the other backend), the
    reference runs once and is judged against them: a run that disagrees fails as non-deterministic."""
    from grader import expected as expected_cache
    from grader.package import load_package_dir

    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected"))
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    version = load_package_dir(folder).version

    first = validate_package(folder, get_backend("bwrap"))
    assert first.ok, first.lines
    assert "two runs agree" in first.lines[0]
    again = validate_package(folder, get_backend("bwrap"))
    assert again.ok, again.lines
    assert "one run agrees with the recorded run" in again.lines[0]

    recorded = expected_cache.load(version, True)
    assert recorded is not None
    name = sorted(recorded)[0]
    expected_cache.store(version, True, {**recorded, name: "not what the reference returns"})
    report = validate_package(folder, get_backend("bwrap"))
    assert not report.ok
    assert any(line.startswith(f"FAIL reference, public: probe '{name}' is not deterministic or fails") for line in report.lines)


def test_validation_grades_the_leaker_and_passes_a_sealed_package() -> None:
    report = validate_package(ADD_NUMBERS, get_backend("bwrap"))
    assert report.ok, report.lines
    assert any(line.startswith("  ok seal: ") for line in report.lines)


def test_validation_fails_a_package_whose_candidates_would_see_the_hidden_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Stand in for a policy (or a custom check) that lets a hidden probe's message through as written.
    from grader import feedback, seal

    monkeypatch.setattr(seal, "candidate_view", lambda result: feedback.candidate_view({**result, "public": True}))
    report = validate_package(ADD_NUMBERS, get_backend("bwrap"))
    assert not report.ok
    [failure] = [line for line in report.lines if line.startswith("FAIL")]
    assert failure.startswith("FAIL seal: the candidate's view shows hidden probe source in probe 'floats' message: ")
