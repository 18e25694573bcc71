"""grader.custom_checks: a probe's check in the worker, built in or from the package's probes/checks.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader import custom_checks
from grader.checks import CheckResult
from grader.errors import PackageError
from grader.package import Package
from grader.package_load import package_from_files, read_package_files
from grader.probe_meta import ProbeSpec

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "packages" / "demo" / "add-numbers"


def package_with_checks(checks_source: str) -> Package:
    files = read_package_files(FIXTURE)
    files["probes/hidden.py"] = files["probes/hidden.py"].replace(b'check="exact"', b'check="close_enough"')
    files["probes/checks.py"] = checks_source.encode()
    return package_from_files(files)


def spec(check: str) -> ProbeSpec:
    return ProbeSpec("integers", "values", check=check)


def test_the_builtin_checks_need_no_checks_py() -> None:
    package = package_from_files(read_package_files(FIXTURE))
    assert package.checks_source is None
    assert custom_checks.run_check(package, spec("exact"), [5, 7, 9], [5, 7, 9]).passed
    assert not custom_checks.run_check(package, spec("exact"), [5.0, 7.0, 9.0], [5, 7, 9]).passed
    assert custom_checks.run_check(package, spec("auto"), np.float64(1.0 + 1e-12), np.float64(1.0)).passed


@pytest.mark.parametrize(
    ("returns", "passed", "message"),
    [
        ("CheckResult(False, 'off by one', {'index': 2})", False, "off by one"),
        ("(True, 'close enough')", True, "close enough"),
        ("actual == expected", True, ""),
        ("actual != expected", False, "the result does not meet the check"),
    ],
)
def test_a_custom_check_may_answer_in_three_ways(returns: str, passed: bool, message: str) -> None:
    package = package_with_checks(f"from grader.checks import CheckResult\n\ndef close_enough(actual, expected):\n    return {returns}\n")
    result = custom_checks.run_check(package, spec("close_enough"), [5, 7, 9], [5, 7, 9])
    assert isinstance(result, CheckResult)
    assert (result.passed, result.message) == (passed, message)


def test_a_custom_check_may_say_how_it_failed_as_a_checkresult_or_an_object_like_one() -> None:
    # Like the sandboxed path (grader/sandboxed_checks.py), the worker reads any object with passed/message/details.
    source = (
        "from grader.checks import CheckResult\n\n"
        "class Verdict:\n"
        "    def __init__(self, passed, message, details):\n"
        "        self.passed, self.message, self.details = passed, message, details\n\n"
        "def close_enough(actual, expected):\n"
        "    if actual[0] != expected[0]:\n"
        "        return CheckResult(False, 'first differs', {'reason': 'first-element'})\n"
        "    return Verdict(actual == expected, 'rest differs', {'reason': 'later-element'})\n"
    )
    package = package_with_checks(source)
    first = custom_checks.run_check(package, spec("close_enough"), [4, 7, 9], [5, 7, 9])
    later = custom_checks.run_check(package, spec("close_enough"), [5, 7, 8], [5, 7, 9])
    assert (first.passed, first.details) == (False, {"reason": "first-element"})
    assert isinstance(later, CheckResult)
    assert (later.passed, later.message, later.details) == (False, "rest differs", {"reason": "later-element"})
    assert custom_checks.run_check(package, spec("close_enough"), [5, 7, 9], [5, 7, 9]).passed


def test_a_missing_checks_py_or_function_is_the_packages_error() -> None:
    # Package validation refuses both; a check asked for by name still says which file lacks what.
    without = package_from_files(read_package_files(FIXTURE))
    with pytest.raises(PackageError, match=r"probes/checks\.py is missing"):
        custom_checks.custom_check(without, "close_enough")
    with pytest.raises(PackageError, match="no function 'NOT_CALLABLE'"):
        custom_checks.custom_check(package_with_checks("def close_enough(a, e):\n    return True\n\nNOT_CALLABLE = 3\n"), "NOT_CALLABLE")


def test_loaded_checks_modules_are_kept_for_the_recent_versions_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(custom_checks, "_checks_modules", type(custom_checks._checks_modules)())
    monkeypatch.setattr(custom_checks, "CHECKS_MODULES_KEPT", 2)
    packages = [package_with_checks(f"def close_enough(actual, expected):\n    return {n} >= 0\n") for n in range(3)]
    first, _second, third = (custom_checks.custom_check(p, "close_enough") for p in packages)
    assert custom_checks.custom_check(packages[2], "close_enough") is third  # loaded once, then reused
    assert list(custom_checks._checks_modules) == [packages[1].version, packages[2].version]
    assert custom_checks.custom_check(packages[0], "close_enough") is not first  # dropped, loaded again


def test_a_custom_check_may_hand_its_per_element_ratio_for_the_error_report() -> None:
    package = package_with_checks(
        "import numpy as np\n\ndef close_enough(actual, expected):\n"
        "    ratio = np.abs(np.asarray(actual, float) - np.asarray(expected, float)) / 0.5\n"
        "    report = {'ratio': ratio, 'truth': np.asarray(expected, float), 'actual': np.asarray(actual, float), 'dtype': 'float32'}\n"
        "    return bool((ratio <= 1).all()), 'off', report\n"
    )
    failed = custom_checks.run_check(package, spec("close_enough"), [5.0, 9.0, 9.0], [5, 7, 9])
    assert (failed.passed, failed.message) == (False, "off")
    assert failed.error_report is not None
    assert failed.error_report["worst_index"] == [1] and failed.error_report["worst_ratio"] == 4.0
    assert failed.error_report["max_abs_error"] == 2.0 and failed.error_report["dtype"] == "float32"
    passed = custom_checks.run_check(package, spec("close_enough"), [5, 7, 9], [5, 7, 9])
    assert passed.passed and passed.error_report is None


def test_a_report_that_cannot_be_built_leaves_the_verdict_alone() -> None:
    package = package_with_checks("def close_enough(actual, expected):\n    return False, 'off', {'ratio': [1.0, 2.0], 'truth': [1.0]}\n")
    result = custom_checks.run_check(package, spec("close_enough"), [5], [5])
    assert (result.passed, result.message, result.error_report) == (False, "off", None)
