"""grader/diagnose.py, grader/signatures.py and the `signatures` / `diagnose` commands: the diagnosis by failure signature.

The pure parts are tested on hand-made results; the real run grades, on
bwrap, a copy of the add-numbers fixture with three wrong solutions, writes
the record, and diagnoses a fresh file that makes one of their mistakes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from grader.__main__ import main
from grader.diagnose import (
    MIN_SIMILARITY,
    Known,
    compare,
    diagnose,
    diagnosis_hint,
    diagnosis_of,
    failing_rules,
    failure_kind,
    leave_one_out,
    library,
    nearest,
    record_problems,
    record_text,
    signature,
    similarity,
)
from grader.errors import PackageError
from grader.package import SIGNATURES_RECORD
from grader.package_load import load_package_dir, package_from_files, read_package_files
from tests.helpers import ADD_NUMBERS


def probe(name: str, status: str = "passed", **details: Any) -> dict[str, Any]:
    return {"name": name, "passed": status == "passed", "status": status, "details": details}


def result(*probes: dict[str, Any], verdict: str = "partial", public: bool = False) -> dict[str, Any]:
    return {"verdict": verdict, "public": public, "probes": list(probes)}


# ----------------------------------------------------------------- signatures


def test_a_failure_is_named_by_what_its_candidate_view_names() -> None:
    assert failure_kind(probe("a")) is None
    assert failure_kind(probe("a", "wrong_answer", failure="dtype", path=["grad", 2])) == "wrong:dtype@grad"
    assert failure_kind(probe("a", "wrong_answer", failure="value", path=[3, "grad"])) == "wrong:value"  # which case, not which part
    assert failure_kind(probe("a", "wrong_answer", failure="elements", path=[])) == "wrong:elements"
    assert failure_kind(probe("a", "wrong_answer")) == "wrong:check"  # a custom check: no property named
    # ... unless it names its own reason (grader/custom_checks.py), a kebab-case word and nothing else.
    assert failure_kind(probe("a", "wrong_answer", reason="copy-inside-k")) == "wrong:check:copy-inside-k"
    assert failure_kind(probe("a", "wrong_answer", reason="Your C is [1, 2]")) == "wrong:check"
    assert failure_kind(probe("a", "runtime_error", runner_status="error", exc_type="ValueError")) == "raised:ValueError"
    # A class the candidate named themselves is not a signature either: only the names a hidden view may show.
    assert failure_kind(probe("a", "runtime_error", runner_status="error", exc_type="MyOwnError")) == "raised:exception"
    assert failure_kind(probe("a", "runtime_error", runner_status="crashed", signal="SIGSEGV")) == "runtime:crashed"
    assert failure_kind(probe("a", "time_limit")) == "time_limit"


def test_only_a_hidden_result_whose_code_ran_and_failed_has_a_signature() -> None:
    failing = result(probe("a"), probe("b", "wrong_answer", failure="shape", path=[]))
    assert signature(failing) == {"b": "wrong:shape"}
    assert signature({**failing, "public": True}) is None  # a Run's few public probes say nothing of the hidden ones
    for verdict in ("accepted", "syntax_error", "rule_violation", "internal_error"):
        assert signature({**failing, "verdict": verdict}) is None
    assert signature(result(probe("a"))) is None


def test_similarity_counts_probes_failing_alike_fully_and_otherwise_half() -> None:
    a = {"x": "wrong:value", "y": "wrong:shape"}
    assert similarity(a, dict(a)) == 1.0
    assert similarity(a, {"x": "wrong:value"}) == 0.5
    assert similarity(a, {"x": "wrong:value", "y": "wrong:dtype"}) == 0.75
    assert similarity(a, {"z": "wrong:value"}) == 0.0
    # Time depends on the host: a probe that ran out of time agrees with any failure of that probe.
    assert similarity({"x": "time_limit"}, {"x": "wrong:value"}) == 1.0


def known(name: str, family: str = "", **failed: str) -> Known:
    return Known(name, family or name, f"words of {name}", dict(failed))


def fails(*names: str, kind: str = "wrong:value") -> dict[str, str]:
    return {name: kind for name in names}


TEN = [f"p{i}" for i in range(10)]


def test_the_nearest_known_mistake_is_named_unless_it_is_too_far_or_a_tie_between_mistakes() -> None:
    lib = [known("sum-dim0", **fails(*TEN)), known("no-upcast", z="wrong:dtype")]
    exact = nearest(fails(*TEN), lib)
    assert exact is not None and exact.solution == "sum-dim0" and exact.exact and exact.matches[0].diagnosis == "words of sum-dim0"
    # One probe of ten failing otherwise: 9.5 of 10 alike, named, not exact.
    close = nearest({**fails(*TEN), "p9": "wrong:shape"}, lib)
    assert close is not None and close.solution == "sum-dim0" and not close.exact and close.similarity == pytest.approx(0.95)
    assert close.similarity >= MIN_SIMILARITY
    # Two probes of ten besides: 10 of 12 alike, too far to name.
    assert nearest(fails(*TEN, "q1", "q2"), lib) is None
    assert nearest({"w": "wrong:value"}, lib) is None
    # Two mistakes alike to the same degree: both are named, the candidate knows which is theirs; five are too many.
    tie = [known("one", **fails(*TEN, "q1")), known("two", **fails(*TEN, "q2"))]
    found = nearest(fails(*TEN), tie)
    assert found is not None and found.families == ("one", "two") and found.similarity == pytest.approx(10 / 11)
    many = [known(f"m{i}", x="wrong:value") for i in range(5)]
    assert nearest({"x": "wrong:value"}, many[:4]) is not None
    assert nearest({"x": "wrong:value"}, many) is None
    # Two solutions of one mistake alike to the same degree: the mistake is named (the first in expected.toml's order).
    same = [known("one", "fam", **fails(*TEN, "q1")), known("two", "fam", **fails(*TEN, "q2"))]
    named = nearest(fails(*TEN), same)
    assert named is not None and named.families == ("fam",) and named.solution == "one"
    hint = diagnosis_hint(found, result(probe("x", "wrong_answer", failure="value", path=[])))
    assert hint is not None and hint["text"].startswith("Your failures look like those of 2 known mistakes")
    assert "\n- words of one\n- words of two" in hint["text"] and hint["solution"] == "one, two"


# ----------------------------------------------------------------- the record, on the fixture


WRONG = {
    # Every sum off by one: every probe fails on its values.
    "off-by-one": (
        "import numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b) + 1\n",
        "values",
        "Your sums are all shifted by the same amount.",
    ),
    # The same mistake written otherwise: one family.
    "plus-one-later": (
        "import numpy as np\n\n\ndef add(a, b):\n    out = np.add(a, b)\n    return out + np.ones_like(out)\n",
        "values",
        "Your sums are all shifted by the same amount.",
    ),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dest = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dest / SIGNATURES_RECORD).unlink()  # the fixture's own record: these tests write their own
    expected = (dest / "solutions" / "expected.toml").read_text()
    for name, (code, family, words) in WRONG.items():
        (dest / "solutions" / f"{name}.py").write_text(code)
        expected += f'\n[{name}]\nverdict = "wrong_answer"\nwhy = "off by one"\nfamily = "{family}"\ndiagnosis = "{words}"\n'
    (dest / "solutions" / "expected.toml").write_text(expected)
    return dest


def test_expected_toml_refuses_unknown_keys_and_reads_diagnosis_and_family(folder: Path) -> None:
    package = load_package_dir(folder)
    by_name = {s.name: s for s in package.solutions}
    assert by_name["off-by-one"].family == "values" and by_name["off-by-one"].diagnosis.startswith("Your sums")
    assert by_name["float64"].family == "widened-dtype" and "dtype" in by_name["float64"].diagnosis
    files = read_package_files(folder)
    files["solutions/expected.toml"] += b'diagnosys = "typo"\n'
    with pytest.raises(PackageError, match=r"unknown key.*diagnosys"):
        package_from_files(files)


@pytest.mark.sandbox
def test_the_record_is_written_from_real_gradings_and_names_a_fresh_files_mistake(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SANDBOX_BACKEND", "bwrap")
    assert record_problems(load_package_dir(folder))[0].startswith(f"no {SIGNATURES_RECORD}")
    assert main(["signatures", str(folder), "--jobs", "2", "--write"]) == 0
    package = load_package_dir(folder)
    assert record_problems(package) == []
    lib = {k.name: k for k in library(package)}
    assert set(lib) == {"float64", "off-by-one", "plus-one-later"}
    assert lib["off-by-one"].failed == lib["plus-one-later"].failed
    assert set(lib["off-by-one"].failed) == {"floats", "keeps_float16", "integers"}
    assert lib["float64"].failed["keeps_float16"].startswith("wrong:dtype")

    # A file nobody shipped, making the off-by-one mistake a third way: named, in the author's words.
    fresh = tmp_path / "mine.py"
    fresh.write_text("import numpy as np\n\n\ndef add(a, b):\n    return 1 + np.add(a, b)\n")
    capsys.readouterr()
    assert main(["diagnose", str(folder), str(fresh)]) == 0
    out = capsys.readouterr().out
    assert "the same failures as solutions/off-by-one.py (family values)" in out and "shifted by the same amount" in out
    # ... with the signature it was matched on, one failing probe a line.
    assert "  failed floats: wrong:elements\n  failed integers: wrong:value\n  failed keeps_float16: wrong:elements\n" in out

    # Left out one at a time: each off-by-one finds its twin; the float64 mistake has none and is not guessed at.
    outcomes = {h.name: h.outcome for h in leave_one_out(package)}
    assert outcomes == {"float64": "none", "off-by-one": "right", "plus-one-later": "right"}


def test_a_record_no_longer_holds_when_probes_or_solutions_change_and_then_names_nothing(folder: Path) -> None:
    package = load_package_dir(folder)
    results = {
        "float64": result(probe("keeps_float16", "wrong_answer", failure="dtype", path=[])),
        "off-by-one": result(probe("floats", "wrong_answer", failure="float", path=[])),
        "plus-one-later": result(probe("floats", "wrong_answer", failure="float", path=[])),
    }
    (folder / SIGNATURES_RECORD).write_text(record_text(package, results))
    package = load_package_dir(folder)
    assert record_problems(package) == []
    assert diagnose(package, result(probe("floats", "wrong_answer", failure="float", path=[]))) is not None

    (folder / "solutions" / "off-by-one.py").write_text(WRONG["off-by-one"][0] + "\n# edited\n")
    changed = load_package_dir(folder)
    assert "solutions/off-by-one.py changed since its signature was recorded" in record_problems(changed)
    assert library(changed) == [] and diagnose(changed, result(probe("floats", "wrong_answer", failure="float", path=[]))) is None

    (folder / "solutions" / "off-by-one.py").write_text(WRONG["off-by-one"][0])
    hidden = folder / "probes" / "hidden.py"
    hidden.write_text(hidden.read_text() + "\n")
    assert "the probes, reference or limits changed since it was written" in record_problems(load_package_dir(folder))


def test_validation_compares_a_fresh_grading_with_the_record(folder: Path) -> None:
    package = load_package_dir(folder)
    recorded = {
        "float64": result(probe("keeps_float16", "wrong_answer", failure="dtype", path=[]), probe("slow", "time_limit")),
        "off-by-one": result(probe("floats", "wrong_answer", failure="float", path=[])),
        "plus-one-later": result(probe("floats", "wrong_answer", failure="float", path=[])),
    }
    (folder / SIGNATURES_RECORD).write_text(record_text(package, recorded))
    package = load_package_dir(folder)
    assert compare(package, "off-by-one", recorded["off-by-one"]) is None
    # A probe that ran out of time on a loaded host and failed on values on a quiet one, or one whose garbage was
    # values on one backend and NaN on another: the same failing probes, the same mistake.
    quiet = result(probe("keeps_float16", "wrong_answer", failure="dtype", path=[]), probe("slow", "wrong_answer", failure="float", path=[]))
    assert compare(package, "float64", quiet) is None
    other = result(probe("keeps_float16", "wrong_answer", failure="nonfinite", path=[]), probe("slow", "time_limit"))
    assert compare(package, "float64", other) is None
    # A probe that ran out of time on a loaded host and passed on a quiet one (or the reverse): timing, not drift.
    passed_quietly = result(probe("keeps_float16", "wrong_answer", failure="dtype", path=[]))
    assert compare(package, "float64", passed_quietly) is None
    loaded = result(probe("floats", "wrong_answer", failure="float", path=[]), probe("integers", "time_limit"))
    assert compare(package, "off-by-one", loaded) is None
    more = result(probe("floats", "wrong_answer", failure="float", path=[]), probe("integers", "wrong_answer", failure="elements", path=[]))
    drift = compare(package, "off-by-one", more)
    assert drift is not None and "integers: recorded passed, now wrong:elements" in drift and "write the record again" in drift


def test_a_probe_listed_as_varying_is_left_out_of_the_comparison_and_a_bad_list_is_named(folder: Path) -> None:
    """A mistake keyed on id() fails a many-graph probe only where Python reuses an id: that probe tells nothing
    about the record, every other probe still does."""
    expected = folder / "solutions" / "expected.toml"
    expected.write_text(expected.read_text().replace("[off-by-one]\n", '[off-by-one]\nvarying = ["integers"]\n', 1))
    package = load_package_dir(folder)
    assert {s.name: s for s in package.solutions}["off-by-one"].varying == ("integers",)
    (folder / SIGNATURES_RECORD).write_text(record_text(package, {"off-by-one": result(probe("floats", "wrong_answer", failure="float", path=[]))}))
    package = load_package_dir(folder)
    reused = result(probe("floats", "wrong_answer", failure="float", path=[]), probe("integers", "runtime_error"))
    assert compare(package, "off-by-one", reused) is None
    drift = compare(package, "off-by-one", result(probe("keeps_float16", "wrong_answer", failure="dtype", path=[])))
    assert drift is not None and "floats: recorded wrong:float, now passed" in drift
    files = read_package_files(folder)
    files["solutions/expected.toml"] = files["solutions/expected.toml"].replace(b'varying = ["integers"]', b'varying = "integers"')
    with pytest.raises(PackageError, match=r"must be a list of probe names"):
        package_from_files(files, origin=str(folder))


# ----------------------------------------------------------------- the statement, when no mistake is near

COVERAGE = """
[[entry]]
id = "element-wise-sum"
kind = "rule"
statement = "returns the element-wise sum"
probes = ["floats", "integers"]

[[entry]]
id = "float16-kept"
kind = "rule"
statement = "A float16 sum stays float16."
probes = ["keeps_float16"]

[[entry]]
id = "integer-arrays"
kind = "input"
statement = "The arrays may hold integers."
probes = ["integers"]
"""


def test_when_no_known_mistake_is_near_the_parts_of_the_statement_whose_probes_all_fail_are_named(folder: Path) -> None:
    statement = folder / "statement.md"
    statement.write_text(statement.read_text() + "\nThe arrays may hold integers. A float16 sum stays float16.\n")
    (folder / "coverage.toml").write_text(COVERAGE)
    package = load_package_dir(folder)
    recorded = {
        "float64": result(probe("keeps_float16", "wrong_answer", failure="dtype", path=[])),
        "off-by-one": result(*(probe(n, "wrong_answer", failure="float", path=[]) for n in ("floats", "integers", "keeps_float16"))),
        "plus-one-later": result(*(probe(n, "wrong_answer", failure="float", path=[]) for n in ("floats", "integers", "keeps_float16"))),
    }
    (folder / SIGNATURES_RECORD).write_text(record_text(package, recorded))
    package = load_package_dir(folder)

    # Only the integer probe fails: no known mistake is near; the input class it alone tests is named, not the
    # rule it shares with a probe that passes.
    ints = result(probe("integers", "wrong_answer", failure="elements", path=[]))
    assert diagnose(package, ints) is None
    assert [e.id for e in failing_rules(package, signature(ints) or {})] == ["integer-arrays"]
    found, hint = diagnosis_of(package, ints)
    assert found is not None and found["solutions"] == [] and found["rules"] == ["integer-arrays"]
    assert hint is not None and hint["kind"] == "diagnosis" and hint["rules"] == ["integer-arrays"] and hint["solution"] == ""
    assert hint["text"].startswith("No known mistake fails quite like yours")
    assert "the inputs it allows: “The arrays may hold integers.”" in hint["text"]

    # Both value probes fail: the rule that accounts for both is enough; the input class adds nothing.
    values = {"floats": "wrong:value", "integers": "wrong:value"}
    assert [e.id for e in failing_rules(package, values)] == ["element-wise-sum"]
    # A part whose probes are less than half of what fails is a bystander of a mistake made elsewhere: not named.
    hidden = folder / "probes" / "hidden.py"
    hidden.write_text(
        hidden.read_text()
        + "".join(f'\n\n@probe(category="values")\ndef more_{i}(solution):\n    """More."""\n    return solution.add(1, {i})\n' for i in range(3))
    )
    wider = load_package_dir(folder)
    assert [e.id for e in failing_rules(wider, {"integers": "wrong:value", "more_0": "wrong:value"})] == ["integer-arrays"]
    assert failing_rules(wider, {"integers": "wrong:value", "more_0": "wrong:value", "more_1": "wrong:value"}) == ()
    # Every hidden probe failing singles out nothing; nor does a package without a table.
    assert failing_rules(package, {n: "wrong:value" for n in ("floats", "integers", "keeps_float16")}) == ()
    (folder / "coverage.toml").unlink()
    assert failing_rules(load_package_dir(folder), signature(ints) or {}) == ()

    # A near known mistake is named as before, in its author's words.
    dtype = result(probe("keeps_float16", "wrong_answer", failure="dtype", path=[]))
    found, hint = diagnosis_of(package, dtype)
    assert found is not None and found["solutions"] == ["float64"] and hint is not None and hint["solution"] == "float64"
