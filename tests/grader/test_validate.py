"""grader/validate.py: what a validation reports, the same whether it grades one or several at once.

Real sandbox (bwrap) on the add-numbers fixture; a copy whose expected.toml
lies about a solution must fail naming that solution.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from grader.diagnose import read_record, record_problems
from grader.errors import PackageError
from grader.package import SIGNATURES_RECORD
from grader.package_load import load_package_dir
from grader.validate import Share, validate_jobs, validate_package
from sandbox import get_backend
from tests.helpers import ADD_NUMBERS

pytestmark = pytest.mark.sandbox  # every test validates the fixture package in real sandboxes

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
        return [re.sub(r" \([0-9.]+ s of probes\)$", "", line.split(";")[0]) for line in lines]

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
    from grader.package_load import load_package_dir

    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected"))
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    version = load_package_dir(folder).version

    first = validate_package(folder, get_backend("bwrap"))
    assert first.ok, first.lines
    assert any("two runs agree" in line for line in first.lines), first.lines
    again = validate_package(folder, get_backend("bwrap"))
    assert again.ok, again.lines
    assert any("one run agrees with the recorded run" in line for line in again.lines), again.lines

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


def test_a_package_with_source_rules_still_puts_its_probes_and_seal_to_the_platforms_own_test_codes(tmp_path: Path) -> None:
    # The leaker reads the probe file with open() and the cheats reach the module through sys.modules: a sealed
    # package's rules would refuse both, and leave the seal and the probes untested. They are the platform's own.
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    toml = folder / "challenge.toml"
    toml.write_text(toml.read_text().replace("[[hints]]", '[rules]\nforbidden = ["float64"]\nsealed = true\n\n[[hints]]', 1))
    expected = folder / "solutions" / "expected.toml"
    expected.write_text(re.sub(r"(?ms)^\[float64\].*?(?=^\[|\Z)", '[float64]\nverdict = "rule_violation"\nscore = 0\n', expected.read_text()))
    report = validate_package(folder, get_backend("bwrap"))
    assert report.ok, report.lines
    assert any(line.startswith("  ok seal: ") for line in report.lines)
    cheats = [line for line in report.lines if line.startswith("  ok cheat ")]
    assert cheats and not any("rule_violation" in line for line in cheats), cheats
    assert "  ok solutions/float64.py: rule_violation, 0% as expected (0.0 s of probes)" in report.lines


def test_validation_fails_a_package_whose_candidates_would_see_the_hidden_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Stand in for a policy (or a custom check) that lets a hidden probe's message through as written.
    from grader import feedback, seal

    monkeypatch.setattr(seal, "candidate_view", lambda result: feedback.candidate_view({**result, "public": True}))
    report = validate_package(ADD_NUMBERS, get_backend("bwrap"))
    assert not report.ok
    [failure] = [line for line in report.lines if line.startswith("FAIL")]
    assert failure.startswith("FAIL seal: the candidate's view shows hidden probe source in probe 'floats' message: ")


ACCEPTED_SOLUTION = "import numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b)\n"
RETURNS_B = "def add(a, b):\n    return b\n"


@pytest.fixture
def dealt_package(tmp_path: Path) -> Path:
    """add-numbers with an accepted solution and three failing ones, one of whose stated verdicts is false."""
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    (folder / "solutions" / "np-add.py").write_text(ACCEPTED_SOLUTION)
    (folder / "solutions" / "first-only.py").write_text(WRONG_SOLUTION)
    (folder / "solutions" / "returns-b.py").write_text(RETURNS_B)
    expected = folder / "solutions" / "expected.toml"
    expected.write_text(
        expected.read_text()
        + '\n[np-add]\nverdict = "accepted"\nwhy = "The same sum."\n'
        + '\n[first-only]\nverdict = "wrong_answer"\nwhy = "It returns a."\n'
        + '\n[returns-b]\nverdict = "accepted"\nwhy = "A false statement: it returns b."\n'
    )
    return folder


def _graded(report_lines: list[str]) -> set[str]:
    """The starter and solutions a part graded, from its report's lines."""
    return {
        line.split()[1].rstrip(":")
        for line in report_lines
        if line.split()[1].startswith(("solutions/", "starter")) and "another backend's part" not in line
    }


def test_a_shared_validation_deals_the_solutions_out_and_runs_the_reference_and_seal_everywhere(
    dealt_package: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected"))
    bwrap = get_backend("bwrap")
    # Every stated verdict true this time: returns-b fails, as it does.
    expected = dealt_package / "solutions" / "expected.toml"
    expected.write_text(expected.read_text().replace('[returns-b]\nverdict = "accepted"', '[returns-b]\nverdict = "wrong_answer"'))
    monkeypatch.setenv("GRADER_VALIDATE_JOBS", "1")
    starts: list[str] = []
    real_start = bwrap.start
    monkeypatch.setattr(bwrap, "start", lambda profile, limits: starts.append(profile) or real_start(profile, limits))
    first = validate_package(dealt_package, bwrap, share=Share(0, 2))
    first_starts = len(starts)
    second = validate_package(dealt_package, bwrap, share=Share(1, 2))
    assert first.ok and second.ok, (first.lines, second.lines)
    # Sandboxes: one per part (a series). The first runs the reference's public and hidden probes, then
    # its shipped code; the second the reference's hidden probes, its shipped code, and last the leaker,
    # dealt after the failing deck (starter, three solutions, three cheats: position 7).
    assert (first_starts, len(starts) - first_starts) == (1, 1)

    # The first part records the reference from one run; the second proves determinism by agreeing with it.
    assert sum("recorded from one run" in line for line in first.lines) == 2
    assert sum("one run agrees with the recorded run" in line for line in second.lines) == 1  # the hidden probes
    assert any("public: run by the first part" in line for line in second.lines)
    # Dealt in turn: the failing deck (starter, float64, first-only, returns-b), then the accepted one (np-add).
    assert _graded(first.lines) == {"starter", "solutions/first-only.py", "solutions/np-add.py"}
    assert _graded(second.lines) == {"solutions/float64.py", "solutions/returns-b.py"}
    assert any(line.strip().startswith("ok seal: put to the test by another backend's part") for line in first.lines)
    assert any(line.strip().startswith("ok seal: a submission that reads the hidden probes") for line in second.lines)


def test_a_false_verdict_fails_the_part_it_is_dealt_to(dealt_package: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected"))
    bwrap = get_backend("bwrap")
    # returns-b is stated "accepted": second in the accepted deck (np-add, returns-b), so the second part grades it.
    first, second = (validate_package(dealt_package, bwrap, share=Share(i, 2)) for i in range(2))
    assert first.ok, first.lines
    assert not second.ok
    assert any(line.startswith("FAIL solutions/returns-b.py: verdict wrong_answer, expected accepted") for line in second.lines), second.lines
    # Shared out or whole, the lie is caught.
    assert not validate_package(dealt_package, bwrap).ok


LISTS_PROBE = '''

@probe(category="values", hints=["values"])
def lists(solution):
    """Plain lists add elementwise too."""
    return solution.add([1.0, 2.0], [3.0, 4.0])
'''


@pytest.mark.parametrize(
    ("starter", "graded_on"),
    [
        ("def add(a, b):\n    raise NotImplementedError\n", "on the first 3 hidden probes (a screening"),
        # Right on arrays, so it passes the three screening probes; concatenates lists, which only the fourth probe passes.
        ("def add(a, b):\n    return a + b\n", "on hidden probes"),
    ],
    ids=["fails-a-screening-probe", "passes-the-screening"],
)
def test_the_starter_is_screened_on_the_first_hidden_probes_and_graded_on_all_if_it_passes_them(
    package_copy: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, starter: str, graded_on: str
) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected"))
    monkeypatch.setenv("GRADER_VALIDATE_JOBS", "1")
    with (package_copy / "probes" / "hidden.py").open("a") as fh:
        fh.write(LISTS_PROBE)
    (package_copy / "starter" / "solution.py").write_text(starter)
    report = validate_package(package_copy, get_backend("bwrap"))
    assert report.ok, report.lines
    [line] = [line for line in report.lines if line.strip().startswith("ok starter:")]
    assert graded_on in line, line
    assert "100%" not in line, line


def test_a_share_outside_its_whole_is_refused() -> None:
    with pytest.raises(ValueError, match=r"index must be in 0\.\.1"):
        Share(2, 2)


def test_a_fresh_validation_writes_the_signatures_record_from_its_own_gradings(tmp_path: Path) -> None:
    """``check --fresh --write-signatures``: the record a probe change made wrong is rewritten, not compared."""
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    record = folder / SIGNATURES_RECORD
    # A current record that says the wrong solution fails otherwise than it does: a plain validation fails on it.
    record.write_text(record.read_text().replace('"integers" = "wrong:value"\n', ""))
    plain = validate_package(folder, get_backend("bwrap"))
    assert not plain.ok
    assert any("its failures differ from solutions/signatures.toml" in line for line in plain.lines), plain.lines

    report = validate_package(folder, get_backend("bwrap"), record_signatures=True)
    assert report.ok, report.lines
    assert any(line.startswith(f"  ok {SIGNATURES_RECORD}: written from these gradings (1 wrong solutions)") for line in report.lines)
    package = load_package_dir(folder)
    assert record_problems(package) == []
    assert read_record(package)["solution"]["float64"]["failed"] == {"integers": "wrong:value", "keeps_float16": "wrong:dtype"}
    assert validate_package(folder, get_backend("bwrap")).ok  # the record now holds for a plain validation


def test_signatures_are_written_when_only_a_wrong_solutions_score_is_off_and_not_when_a_grading_is_unsound(tmp_path: Path) -> None:
    """A new probe moves wrong solutions' scores: the gradings still say how each fails, so the record is written
    and only expected.toml has to move; a wrong solution that passes (or a failing reference) writes nothing."""
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    record = folder / SIGNATURES_RECORD
    record.write_text(record.read_text().replace('"integers" = "wrong:value"\n', ""))
    expected = folder / "solutions" / "expected.toml"
    expected.write_text(expected.read_text().replace("score_below = 100", "score_below = 1"))
    report = validate_package(folder, get_backend("bwrap"), record_signatures=True)
    assert not report.ok and report.hard_failures == 0, report.lines
    assert any(line.startswith("FAIL solutions/float64.py: score") and "expected below 1" in line for line in report.lines), report.lines
    assert any("failed only on wrong solutions' scores or verdicts" in line for line in report.lines), report.lines
    assert read_record(load_package_dir(folder))["solution"]["float64"]["failed"] == {"integers": "wrong:value", "keeps_float16": "wrong:dtype"}

    # The wrong solution made right: it is accepted, which no record of failures can describe.
    record.write_text(record.read_text().replace('"integers" = "wrong:value"\n', ""))
    (folder / "solutions" / "float64.py").write_text((folder / "reference" / "solution.py").read_text())
    report = validate_package(folder, get_backend("bwrap"), record_signatures=True)
    assert not report.ok and report.hard_failures >= 1, report.lines
    assert not any("written from these gradings" in line for line in report.lines), report.lines


def test_writing_signatures_needs_a_whole_validation_that_runs() -> None:
    with pytest.raises(ValueError, match="record_signatures needs a whole validation"):
        validate_package(ADD_NUMBERS, get_backend("bwrap"), record_signatures=True, share=Share(0, 2))
    with pytest.raises(ValueError, match="record_signatures needs a whole validation"):
        validate_package(ADD_NUMBERS, get_backend("bwrap"), record_signatures=True, remember=True)
    with pytest.raises(ValueError, match="record_signatures needs a whole validation"):
        validate_package(ADD_NUMBERS, get_backend("bwrap"), record_signatures=True, by_record=True)


MORE_PROBES = (
    LISTS_PROBE
    + '''

@probe(category="values")
def more_floats(solution):
    """Other float64 sums."""
    rng = np.random.default_rng(2)
    return solution.add(rng.normal(size=(4, 2)), rng.normal(size=(4, 2)))


@probe(category="values")
def a_row_of_floats(solution):
    """A row of float64 sums."""
    return solution.add(np.linspace(0.0, 1.0, 7), np.linspace(1.0, 2.0, 7))
'''
)


@pytest.fixture
def recorded_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """add-numbers with six hidden probes, of which the wrong float64 fails two, and its signatures record written."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected"))
    monkeypatch.setenv("GRADER_VALIDATE_JOBS", "1")
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    with (folder / "probes" / "hidden.py").open("a") as fh:
        fh.write(MORE_PROBES)
    written = validate_package(folder, get_backend("bwrap"), record_signatures=True)
    assert written.ok, written.lines
    return folder


def _line_of(report_lines: list[str], name: str) -> str:
    [line] = [line for line in report_lines if f" {name}:" in line]
    return line


def test_a_wrong_solution_graded_by_its_record_runs_its_failures_and_two_passes_and_gets_its_whole_verdict(recorded_package: Path) -> None:
    """make test grades a recorded wrong solution on the probes it fails and two it passes: 4 of 6 here."""
    whole = validate_package(recorded_package, get_backend("bwrap"))
    by_record = validate_package(recorded_package, get_backend("bwrap"), by_record=True)
    assert whole.ok and by_record.ok, (whole.lines, by_record.lines)
    line = _line_of(by_record.lines, "solutions/float64.py")
    assert "by its record (4 of 6 probes graded)" in line, line
    # The verdict and score over the whole set: the probes not graded count as the record has them (passed).
    assert line.split(", by its record")[0] == _line_of(whole.lines, "solutions/float64.py").split(" as expected")[0] + " as expected"
    assert "partial, 71.43% as expected" in line, line  # 5 of 7 weight: floats (2) and the three new probes pass


def test_a_wrong_solution_whose_graded_probes_differ_from_its_record_is_graded_again_whole(recorded_package: Path) -> None:
    """A recorded failure that passes now: the solution is graded on every probe and judged as without a record."""
    record = recorded_package / SIGNATURES_RECORD
    text = record.read_text()
    record.write_text(text.replace('"integers" = "wrong:value"\n', '"integers" = "wrong:value"\n"lists" = "wrong:value"\n'))
    report = validate_package(recorded_package, get_backend("bwrap"), by_record=True)
    assert not report.ok
    line = _line_of(report.lines, "solutions/float64.py")
    assert line.startswith("FAIL solutions/float64.py: its failures differ from solutions/signatures.toml (lists: recorded wrong:value, now passed)")
    assert "by its record" not in line
