"""web.cli's printing of a result (pure: payloads built by hand; the whole CLI against a server is tests/integration/test_cli.py)."""

from __future__ import annotations

import io

import numpy as np

from grader.diff import expected_summary, structured_diff
from sandbox.runner.codec import TaggedArray
from web.cli import diff_lines, print_live, print_result


def test_a_runs_diff_prints_the_differing_leaves_with_both_values():
    diff = structured_diff({"loss": 1.0, "grad": [1.0, 2.0, 0.0]}, {"loss": 1.0, "grad": [1.0, 2.0, 3.0]})
    assert diff_lines(diff) == ["result['grad'][2]: yours 0.0, expected 3.0"]


def test_an_array_prints_its_first_mismatches_and_tolerance():
    expected = TaggedArray(np.arange(6, dtype=np.float32), "float32", "numpy")
    actual = TaggedArray(np.array([0, 1, 0, 3, 0, 5], dtype=np.float32), "float32", "numpy")
    assert diff_lines(structured_diff(actual, expected)) == [
        "result: 2 of 6 elements differ (rtol=1.3e-06, atol=1e-05)",
        "  at [2]: yours 0.0, expected 2.0",
        "  at [4]: yours 0.0, expected 4.0",
    ]


def test_keys_and_types_that_differ_are_named_and_long_diffs_are_cut():
    assert diff_lines(structured_diff({"a": 1}, {"b": 1})) == ["result: missing keys 'b'; unexpected keys 'a'"]
    assert diff_lines(structured_diff({"x": "3"}, {"x": 3})) == ["result['x']: yours '3', expected 3 (a str where an int is expected)"]
    lines = diff_lines(structured_diff(list(range(100)), [-1] * 100))
    assert len(lines) == 11 and lines[-1] == "... and 90 more"


def test_a_raised_public_probe_prints_the_expected_value():
    result = {
        "kind": "run", "id": 7, "status": "done", "verdict": "runtime_error", "score": 0.0, "message": "0 of 1 probes passed",
        "probes": [{"name": "small", "category": "values", "passed": False, "message": "ValueError: boom", "diff": expected_summary([1, 2])}],
        "hints": [],
    }  # fmt: skip
    out = io.StringIO()
    print_result(result, out)
    assert "  FAIL small [values]: ValueError: boom\n      expected: [1, 2]\n" in out.getvalue()


def test_live_lines_are_printed_once_each_as_they_come():
    out = io.StringIO()
    first = {"total": 3, "probes": [{"name": "triples", "outcome": "failed"}]}
    printed = print_live(first, 0, out)
    more = [{"name": "halves", "outcome": "passed", "status": "ok"}, {"name": "x", "outcome": "failed", "status": "timeout"}]
    both = {"total": 3, "probes": [*first["probes"], *more]}
    printed = print_live(both, printed, out)
    assert print_live(None, printed, out) == 3
    assert out.getvalue() == "  [1/3] triples failed\n  [2/3] halves passed\n  [3/3] x failed (timeout)\n"


def test_a_failing_tensor_prints_its_error_reports_summary_line():
    from grader import error_report

    report = error_report.build(
        np.array([[0.5, 3.0], [0.0, 1.0]]), dtype="float16", abs_error=np.array([[1e-3, 6e-3], [0.0, 2e-3]]), truth=np.ones((2, 2))
    )
    result = {
        "kind": "run", "id": 8, "status": "done", "verdict": "wrong_answer", "score": 0.0, "message": "0 of 1 probes passed",
        "probes": [{"name": "small", "category": "values", "passed": False, "message": "off", "error_report": report}],
        "hints": [],
    }  # fmt: skip
    out = io.StringIO()
    print_result(result, out)
    line = "error report: float16 (2, 2): 1 of 4 elements over their bound; max abs error 0.006, max rel error 0.006 (6.14 ULP of float16); "
    assert f"      {line}worst at [0, 1], 3 times its bound\n" in out.getvalue()
    hidden = {**result, "probes": [{**result["probes"][0], "error_report": error_report.hidden_view(report)}]}
    out = io.StringIO()
    print_result(hidden, out)
    assert "      error report: 1 of 4 elements over their bound; worst at [0, 1] (the page draws where)\n" in out.getvalue()
    assert "0.006" not in out.getvalue()
