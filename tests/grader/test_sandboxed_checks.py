"""Custom checks run in a sandbox for packages from less trusted authors (grader/sandboxed_checks.py).

The package is add-numbers with a probes/checks.py that uses what checks in
the worker use (``grader.checks.check`` and ``CheckResult``, ``TaggedArray``
attributes) plus probes to exercise every way a check can end. Each case is
graded twice, with the checks in the worker and in a sandbox, on real
backends: the results must be the same, and what a check does to the file
system must stay in its sandbox.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from grader import Package
from grader.sandboxed_checks import BATCH_BYTES, _item, _job
from sandbox.runner import codec
from tests.helpers import DECODED_OBSERVATIONS, grade, package_with, real_backends, same_observation

CHECKS = '''
from __future__ import annotations

from typing import Any

from grader.checks import CheckResult, check


def close_with_dtype(actual: Any, expected: Any) -> CheckResult:
    """The library's own comparison, plus the logical dtype from the TaggedArray."""
    if actual.dtype != expected.dtype:
        return CheckResult(False, f"dtype {actual.dtype}, expected {expected.dtype}", {"worst": 1.5})
    return check(actual, expected, mode="auto")


def same_length(actual: Any, expected: Any) -> tuple[bool, str]:
    # Raises on a candidate's non-list (their fault: a wrong answer), never on the reference's list.
    return len(actual) == len(expected), f"{len(actual)} values, expected {len(expected)}"


def leaves_a_mark(actual: Any, expected: Any) -> bool:
    with open(MARKER, "w") as fh:  # in the worker this is the host's /tmp; in a sandbox its own
        fh.write("written by a check")
    return actual == expected


def always_broken(actual: Any, expected: Any) -> bool:
    raise RuntimeError("this check is broken")
'''

HIDDEN = """
import numpy as np
from probekit import probe


@probe(category="values", check="close_with_dtype")
def keeps_float16(solution):
    return solution.add(np.ones(3, dtype=np.float16), np.ones(3, dtype=np.float16))


@probe(category="values", check="same_length")
def lengths(solution):
    out = solution.add(np.array([1, 2, 3]), np.array([4, 5, 6]))
    return out.tolist() if hasattr(out, "tolist") else out


@probe(category="values", check="leaves_a_mark")
def marked(solution):
    return int(np.sum(solution.add(np.array([1]), np.array([2]))))
"""

BROKEN_HIDDEN = (
    HIDDEN
    + """

@probe(category="values", check="always_broken")
def broken(solution):
    return 1
"""
)

REFERENCE = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"
WIDENS = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b).astype(np.float32) if a.dtype == np.float16 else np.add(a, b)\n"
NOT_A_LIST = "import numpy as np\n\ndef add(a, b):\n    return 7 if a.dtype.kind == 'i' and len(a) == 3 else np.add(a, b)\n"


@pytest.fixture
def marker() -> Path:
    path = Path(f"/tmp/mlprep-check-marker-{uuid.uuid4().hex}")
    yield path
    path.unlink(missing_ok=True)


def packages(tmp_path: Path, marker: Path, hidden: str = HIDDEN) -> tuple[Package, Package]:
    trusted = package_with(tmp_path, probes__checks_py=CHECKS.replace("MARKER", repr(str(marker))), probes__hidden_py=hidden)
    return trusted, dataclasses.replace(trusted, checks_in_sandbox=True)


def outcome(result: Any) -> list[tuple[str, bool, str, str]]:
    return [(p.name, p.passed, p.status, p.message) for p in result.probes]


@pytest.mark.parametrize("backend", real_backends())
@pytest.mark.parametrize("code", [REFERENCE, WIDENS, NOT_A_LIST], ids=["reference", "widens-dtype", "not-a-list"])
def test_sandboxed_checks_judge_as_the_worker_does(backend: str, code: str, tmp_path: Path, marker: Path) -> None:
    trusted, untrusted = packages(tmp_path, marker)
    in_worker = grade(code, backend=backend, package=trusted)
    marker.unlink(missing_ok=True)

    in_sandbox = grade(code, backend=backend, package=untrusted)

    assert outcome(in_sandbox) == outcome(in_worker)
    assert (in_sandbox.verdict, in_sandbox.score) == (in_worker.verdict, in_worker.score)
    assert not marker.exists(), "a sandboxed check wrote to the worker's file system"


@pytest.mark.parametrize("backend", real_backends())
def test_the_verdicts_name_what_the_check_said(backend: str, tmp_path: Path, marker: Path) -> None:
    _, untrusted = packages(tmp_path, marker)

    widened = {p.name: p for p in grade(WIDENS, backend=backend, package=untrusted).probes}
    assert widened["keeps_float16"].message == "dtype float32, expected float16"
    assert widened["keeps_float16"].details == {"worst": 1.5}
    assert widened["lengths"].passed and widened["marked"].passed

    misshaped = {p.name: p for p in grade(NOT_A_LIST, backend=backend, package=untrusted).probes}
    assert misshaped["lengths"].status == "wrong_answer"
    assert "does not have the structure this probe expects (TypeError" in misshaped["lengths"].message


@pytest.mark.parametrize("backend", real_backends())
def test_a_check_broken_on_the_reference_too_is_an_internal_error(backend: str, tmp_path: Path, marker: Path) -> None:
    _, untrusted = packages(tmp_path, marker, hidden=BROKEN_HIDDEN)
    result = grade(REFERENCE, backend=backend, package=untrusted)
    broken = next(p for p in result.probes if p.name == "broken")
    assert broken.status == "internal_error" and "the platform's fault" in broken.message
    assert [p.passed for p in result.probes if p.name != "broken"] == [True, True, True]


def test_each_check_in_a_batch_reads_its_own_observations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated data module, run here as the sandbox runs it: every item decodes its own arrays, not a neighbour's."""
    _, untrusted = packages(tmp_path, Path("/nonexistent"))
    spec = untrusted.hidden_probes[0]
    pairs = [
        (DECODED_OBSERVATIONS["float16"], DECODED_OBSERVATIONS["int64"]),
        (DECODED_OBSERVATIONS["nested"], DECODED_OBSERVATIONS["bfloat16"]),
        ({"loss": math.inf, "steps": [1, 2]}, DECODED_OBSERVATIONS["zero_d"]),
    ]
    job = _job(untrusted, [_item(spec, actual, expected) for actual, expected in pairs])

    # In the sandbox, codec is a top-level module and grader.checks is installed from its source.
    monkeypatch.setitem(sys.modules, "codec", codec)
    for name in ("sandbox.runner.codec", "grader.checks"):
        monkeypatch.setitem(sys.modules, name, sys.modules[name])
    data: dict[str, Any] = {}
    exec(compile(job["sources"]["solution"], "solution.py", "exec"), data)

    assert len(data["ITEMS"]) == len(pairs)
    for item, (actual, expected) in zip(data["ITEMS"], pairs, strict=True):
        assert same_observation(data["value"](item, "actual"), actual)
        assert same_observation(data["value"](item, "expected"), expected)
    assert data["value"](data["ITEMS"][0], "actual") is not data["value"](data["ITEMS"][0], "actual")  # a fresh copy each call


def test_a_batch_fits_the_runners_job_limit_and_two_observations_at_the_wire_cap_fit_a_batch() -> None:
    from grader.execute import OBSERVATION_BYTES
    from sandbox.runner.runner import MAX_JOB_BYTES

    assert BATCH_BYTES + 2 * 1024 * 1024 < MAX_JOB_BYTES  # plus the data module's code and grader/checks.py
    assert 2 * OBSERVATION_BYTES * 4 // 3 + 64 * 1024 < BATCH_BYTES


REPORTING_CHECKS = '''
def with_report(actual, expected):
    """A failing check that hands the grader its per-element ratio as a third item."""
    return actual == expected, "compared with its report", {"ratio": [[0.5, 3.0], [0.0, 1.0]]}
'''

REPORTING_HIDDEN = """
import numpy as np
from probekit import probe


@probe(category="values", check="with_report")
def reported(solution):
    return solution.add(np.array([1]), np.array([2])).tolist()
"""


@pytest.mark.parametrize("backend", real_backends())
def test_a_checks_report_is_skipped_in_a_sandbox_and_its_verdict_kept(backend: str, tmp_path: Path) -> None:
    trusted = package_with(tmp_path, probes__checks_py=REPORTING_CHECKS, probes__hidden_py=REPORTING_HIDDEN)
    untrusted = dataclasses.replace(trusted, checks_in_sandbox=True)
    wrong = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b) + 1\n"

    [in_worker] = grade(wrong, backend=backend, package=trusted).probes
    [in_sandbox] = grade(wrong, backend=backend, package=untrusted).probes

    # A (passed, message, report) tuple is a failure in both places, not a truthy tuple.
    assert (in_sandbox.passed, in_sandbox.message) == (in_worker.passed, in_worker.message) == (False, "compared with its report")
    assert in_worker.error_report is not None and in_worker.error_report["worst_index"] == [0, 1]
    assert in_sandbox.error_report is None
