"""grader.grade.grade_series (and execute.execute_series): trusted code graded one after another in one sandbox.

What it must keep from one sandbox per code: every code gets the result it
gets alone, each job works in a folder of its own, and a code that ends its
sandbox (here by killing the runner) gets its own verdict while the codes
after it go to a new sandbox. Real backends, the add-numbers fixture.
"""

from __future__ import annotations

import textwrap

import pytest

from grader.grade import grade_series
from sandbox import get_backend
from tests.helpers import add_numbers, grade, real_backends

pytestmark = pytest.mark.sandbox  # grades series in real sandboxes

HONEST = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"
RETURNS_A = "def add(a, b):\n    return a\n"
LOSES_FLOAT16 = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b).astype(np.float64)\n"
KILLS_RUNNER = "import os, signal\n\ndef add(a, b):\n    os.kill(os.getppid(), signal.SIGKILL)\n"
# Leaves a file in its probe's folder; a later job that can see it answers wrongly.
LEAVES_A_FILE = textwrap.dedent(
    """
    import numpy as np

    def add(a, b):
        with open("left-by-an-earlier-job", "w") as fh:
            fh.write("x")
        return np.add(a, b)
    """
)
SEES_EARLIER_FILES = textwrap.dedent(
    """
    import glob, os
    import numpy as np

    def add(a, b):
        # The probe works in <root>/probe-<i>: look in every sibling root's probe folders.
        pattern = os.path.join(os.path.dirname(os.path.dirname(os.getcwd())), "*", "*", "left-by-an-earlier-job")
        return np.add(a, b) + (1 if glob.glob(pattern) else 0)
    """
)


@pytest.fixture(params=real_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def summary(result: object) -> tuple[str, float, dict[str, str]]:
    return result.verdict.value, result.score, {p.name: p.status for p in result.probes}  # type: ignore[attr-defined]


def test_each_code_in_a_series_gets_what_it_gets_alone_with_one_sandbox_start(backend: str) -> None:
    codes = [HONEST, RETURNS_A, LOSES_FLOAT16, HONEST]
    series = grade_series(add_numbers(), codes, public=False, backend=get_backend(backend))
    assert [summary(r) for r in series] == [summary(grade(code, backend=backend)) for code in codes]
    assert [r.verdict.value for r in series] == ["accepted", "wrong_answer", "partial", "accepted"]
    started = [r.timings["sandbox_startup_ms"] > 0 for r in series]
    assert started == [True, False, False, False]


def test_a_job_does_not_see_the_files_of_the_job_before_it(backend: str) -> None:
    results = grade_series(add_numbers(), [LEAVES_A_FILE, SEES_EARLIER_FILES], public=False, backend=get_backend(backend))
    assert [r.verdict.value for r in results] == ["accepted", "accepted"], [r.to_dict() for r in results]


def test_the_file_check_above_can_fail() -> None:
    # Within one job the probes' folders are siblings, so a later probe sees an earlier one's file: the check can see.
    both = textwrap.dedent(
        """
        import glob, os
        import numpy as np

        def add(a, b):
            pattern = os.path.join(os.path.dirname(os.path.dirname(os.getcwd())), "*", "*", "left-by-an-earlier-job")
            seen = bool(glob.glob(pattern))
            with open("left-by-an-earlier-job", "w") as fh:
                fh.write("x")
            return np.add(a, b) + (1 if seen else 0)
        """
    )
    (result,) = grade_series(add_numbers(), [both], public=False, backend=get_backend("bwrap"))
    assert result.verdict.value == "partial", result.to_dict()


def test_a_code_that_kills_the_runner_gets_its_verdict_and_the_rest_go_to_a_new_sandbox(backend: str) -> None:
    results = grade_series(add_numbers(), [HONEST, KILLS_RUNNER, HONEST], public=False, backend=get_backend(backend))
    assert [r.verdict.value for r in results] == ["accepted", "runtime_error", "accepted"]
    assert [r.timings["sandbox_startup_ms"] > 0 for r in results] == [True, False, True]


def test_only_grades_a_code_on_the_named_probes_alone() -> None:
    # LOSES_FLOAT16 passes floats and fails keeps_float16: judged on either alone, it is accepted or scores 0.
    codes = [LOSES_FLOAT16, LOSES_FLOAT16, LOSES_FLOAT16]
    series = grade_series(add_numbers(), codes, public=False, backend=get_backend("bwrap"), only=[("floats",), ("keeps_float16",), None])
    assert [summary(r) for r in series] == [
        ("accepted", 100.0, {"floats": "accepted"}),
        ("wrong_answer", 0.0, {"keeps_float16": "wrong_answer"}),
        summary(grade(LOSES_FLOAT16, backend="bwrap")),
    ]
