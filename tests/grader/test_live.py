"""grader.live: each probe's outcome reported as it finishes, judged with the probe's own check.

Real backends on the add-numbers fixture (three hidden probes: floats, keeps_float16,
integers), as the worker grades; the order and content of the calls are what the
page shows. That the calls come while the sandbox still runs is pinned in
tests/sandbox/test_session.py (a runner that waits for the watcher).
"""

from __future__ import annotations

import pytest

from grader.grade import grade_submission
from grader.live import DONE, FAILED, PASSED, ProbeProgress
from sandbox import get_backend
from tests.fake_backend import FakeBackend
from tests.helpers import add_numbers, real_backends

HONEST = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"
LOSES_FLOAT16 = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b).astype(np.float64)\n"
RAISES_ON_INTEGERS = (
    "import numpy as np\n\ndef add(a, b):\n"
    "    if a.dtype.kind == 'i':\n        raise ValueError('no integers')\n    return np.add(a, b)\n"
)


@pytest.fixture(params=real_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def graded_live(code: str, backend: str, *, public: bool = False) -> tuple[list[ProbeProgress], dict[str, bool]]:
    seen: list[ProbeProgress] = []
    result = grade_submission(add_numbers(), code, public=public, backend=get_backend(backend), on_progress=seen.append)
    return seen, {p.name: p.passed for p in result.probes}


@pytest.mark.parametrize(
    ("code", "outcomes"),
    [
        (HONEST, [PASSED, PASSED, PASSED]),
        (LOSES_FLOAT16, [PASSED, FAILED, FAILED]),  # integers come back as floats: the exact check fails
        (RAISES_ON_INTEGERS, [PASSED, PASSED, FAILED]),
    ],
)
def test_each_probe_is_reported_once_as_it_ends_with_the_outcome_the_result_gives(backend: str, code: str, outcomes: list[str]) -> None:
    seen, passed = graded_live(code, backend)
    # The first probe runs alone; the other two may run side by side and end in either order.
    assert seen[0].name == "floats"
    assert [(p.finished, p.total) for p in seen] == [(1, 3), (2, 3), (3, 3)]
    names = ["floats", "keeps_float16", "integers"]
    assert {p.name: p.outcome for p in seen} == dict(zip(names, outcomes, strict=True))
    # The live line and the stored result agree, probe by probe.
    assert {p.name: p.outcome == PASSED for p in seen} == passed
    statuses = ["ok" if o != FAILED or code != RAISES_ON_INTEGERS else "error" for o in outcomes]
    assert {p.name: p.status for p in seen} == dict(zip(names, statuses, strict=True))
    assert [p.at for p in seen] == sorted(p.at for p in seen)


def test_a_run_reports_its_public_probes(backend: str) -> None:
    seen, passed = graded_live(LOSES_FLOAT16, backend, public=True)
    assert [(p.name, p.finished, p.total, p.outcome) for p in seen] == [("small", 1, 1, FAILED)]  # float32 became float64
    assert passed == {"small": False}


def test_code_that_does_not_compile_reports_no_probe(backend: str) -> None:
    seen, passed = graded_live("def add(a, b)\n    return a\n", backend)
    assert seen == [] and passed == {"floats": False, "keeps_float16": False, "integers": False}


def test_a_check_that_raises_is_left_to_the_final_judging() -> None:
    # A float where the exact check compares lists: the check raises on the candidate's value, "done" until the end.
    fake = FakeBackend({"floats": None, "keeps_float16": None, "integers": [5, 7, 9]})
    seen: list[ProbeProgress] = []
    grade_submission(add_numbers(), HONEST, public=False, backend=fake, on_progress=seen.append)
    assert [p.name for p in seen] == ["floats", "keeps_float16", "integers"]
    assert seen[2].outcome == PASSED
    assert {p.outcome for p in seen} <= {PASSED, FAILED, DONE}


def test_without_a_callback_nothing_is_watched() -> None:
    fake = FakeBackend({"floats": None, "keeps_float16": None, "integers": [5, 7, 9]})
    result = grade_submission(add_numbers(), HONEST, public=False, backend=fake)
    assert result.probes[2].passed
