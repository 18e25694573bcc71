"""Custom check for tf-retracing-storm: bounded trace counts, values like the reference's.

An observation is a dict with a ``traces`` entry ({method: count}) and
values (losses, parameters, metrics, call counts). The reference traces each
method exactly once; a correct solution may trace up to MAX_TRACES times
(for example once for the first batch shape and once more with a relaxed
shape, as ``reduce_retracing=True`` does). A count of 0 means the method ran
eagerly. Everything other than the trace counts must match the reference:
call counts exactly, floats to rtol=1e-5, atol=1e-6.
"""

from __future__ import annotations

from typing import Any

from grader.checks import CheckResult, check

MAX_TRACES = 2
RTOL = 1e-5
ATOL = 1e-6


def bounded_traces(actual: Any, expected: Any) -> CheckResult:
    if not isinstance(actual, dict) or not isinstance(actual.get("traces"), dict):
        return check(actual, expected, rtol=RTOL, atol=ATOL)
    calls = expected.get("calls", {})
    for name in expected["traces"]:
        got = actual["traces"].get(name)
        if isinstance(got, bool) or not isinstance(got, int):
            return CheckResult(False, f"result['traces'][{name!r}]: {name} is not a tf.function ({got!r})")
        if got < 1:
            return CheckResult(
                False, f"result['traces'][{name!r}]: {name} never traced: it ran eagerly instead of as a graph"
            )
        if got > MAX_TRACES:
            return CheckResult(
                False,
                f"result['traces'][{name!r}]: {name} traced {got} times over {calls.get(name, '?')} calls; "
                f"at most {MAX_TRACES} traces are allowed",
            )
    values = {k: v for k, v in actual.items() if k != "traces"}
    reference = {k: v for k, v in expected.items() if k != "traces"}
    return check(values, reference, rtol=RTOL, atol=ATOL)
