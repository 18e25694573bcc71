"""Custom checks for tf-retracing-storm: bounded trace counts, values like the reference's.

An observation is a dict with a ``traces`` entry ({method: count}) and
values (losses, parameters, metrics, call counts). The reference traces each
method exactly once; a correct solution may trace up to MAX_TRACES times
(for example once for the first batch shape and once more with a relaxed
shape, as ``reduce_retracing=True`` does). A count of 0 means the method ran
eagerly. Everything other than the trace counts must match the reference:
call counts exactly, floats to rtol=1e-5, atol=1e-6.

``bounded_traces`` (public probes) reports a value mismatch as the standard
check does, values included. ``bounded_traces_hidden`` (hidden probes) names
only the path of the first mismatch: no expected value, no call count, nothing
that tells a hidden probe's inputs.
"""

from __future__ import annotations

from typing import Any

from grader.checks import CheckResult, check

MAX_TRACES = 2
RTOL = 1e-5
ATOL = 1e-6


def _traces_problem(actual: dict[str, Any], expected: dict[str, Any]) -> CheckResult | None:
    for name in expected["traces"]:
        got = actual["traces"].get(name)
        if isinstance(got, bool) or not isinstance(got, int):
            return CheckResult(False, f"result['traces'][{name!r}]: {name} is not a tf.function")
        if got < 1:
            return CheckResult(
                False, f"result['traces'][{name!r}]: {name} never traced: it ran eagerly instead of as a graph"
            )
        if got > MAX_TRACES:
            # The number of calls is left out: it would tell a hidden probe's input.
            return CheckResult(
                False, f"result['traces'][{name!r}]: {name} traced {got} times; at most {MAX_TRACES} traces are allowed"
            )
    return None


def _bounded(actual: Any, expected: Any, hidden: bool) -> CheckResult:
    if not isinstance(actual, dict) or not isinstance(actual.get("traces"), dict):
        result = check(actual, expected, rtol=RTOL, atol=ATOL)
    else:
        problem = _traces_problem(actual, expected)
        if problem is not None:
            return problem
        values = {k: v for k, v in actual.items() if k != "traces"}
        reference = {k: v for k, v in expected.items() if k != "traces"}
        result = check(values, reference, rtol=RTOL, atol=ATOL)
    if result.passed or not hidden:
        return result
    # The standard message quotes expected values; keep only where the first mismatch is.
    # The path is built from the probe's own keys, so it carries nothing the submission wrote.
    path = result.message.split(":", 1)[0] if result.message.startswith("result") else "result"
    return CheckResult(False, f"{path}: does not match the reference's values (rtol={RTOL:g}, atol={ATOL:g})")


def bounded_traces(actual: Any, expected: Any) -> CheckResult:
    """Public probes: trace counts within the bound, values as the standard check reports them."""
    return _bounded(actual, expected, hidden=False)


def bounded_traces_hidden(actual: Any, expected: Any) -> CheckResult:
    """Hidden probes: the same verdict; a value mismatch is named by its path only."""
    return _bounded(actual, expected, hidden=True)
