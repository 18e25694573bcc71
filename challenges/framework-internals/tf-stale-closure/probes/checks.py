"""Custom checks for tf-stale-closure: outputs to a tolerance, read-back settings exactly.

The statement says that trace counts and read-back settings must match
exactly. A probe that records both computed values (probabilities, quantised
tensors, losses, parameters) and settings read back keeps the reads under
top-level keys containing ``"read back"``; the probes convert every float read
to float32 before returning it (the settings are float32 numbers, and a read
of ``0.1`` may give back ``0.1`` or the float32 nearest to it: both are
right). Those keys are compared exactly; everything else to the float32
tolerance the probe would use (``reads_exact``: the default one,
``reads_exact_sgd``: ``rtol=1e-5, atol=1e-6`` after several SGD steps).

A failure is the standard check's result, so a hidden probe's feedback is
composed from its details (which property failed, and where) as for any
built-in check.
"""

from __future__ import annotations

from typing import Any

from grader.checks import CheckResult, check

READ_KEY = "read back"
SGD_RTOL = 1e-5
SGD_ATOL = 1e-6


def _reads_exact(actual: Any, expected: Any, rtol: float | None, atol: float | None) -> CheckResult:
    if not isinstance(actual, dict) or not isinstance(expected, dict) or set(actual) != set(expected):
        # A structural mismatch: the standard check names it.
        return check(actual, expected, rtol=rtol, atol=atol)
    reads = [key for key in expected if READ_KEY in key]
    result = check({k: actual[k] for k in reads}, {k: expected[k] for k in reads}, mode="exact")
    if not result.passed:
        return result
    rest = [key for key in expected if READ_KEY not in key]
    return check({k: actual[k] for k in rest}, {k: expected[k] for k in rest}, rtol=rtol, atol=atol)


def reads_exact(actual: Any, expected: Any) -> CheckResult:
    """Reads exactly, everything else to the default float32 tolerance."""
    return _reads_exact(actual, expected, None, None)


def reads_exact_sgd(actual: Any, expected: Any) -> CheckResult:
    """Reads exactly, everything else to rtol=1e-5, atol=1e-6 (values after several SGD steps)."""
    return _reads_exact(actual, expected, SGD_RTOL, SGD_ATOL)
