"""Custom check for compensated-summation, run in the trusted worker.

The truth never comes from a solution: the check takes the inputs of the
reference's run (the expected observation), computes their exact sum with
``math.fsum`` (float16, bfloat16 and float32 values are exact in float64, and
fsum rounds the exact sum once), and holds each of the candidate's results to

    |total(x) - S| <= 2 u |S| + (L u)^2 sum(|x_i|),   u = 2^-24, L = ceil(log2 max(n, 2)).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from grader.checks import CheckResult

U32 = 2.0**-24


def _is_array(value: Any) -> bool:
    return hasattr(value, "data") and hasattr(value, "dtype") and hasattr(value, "source")


def _rules_problem(actual: Any) -> str | None:
    if not isinstance(actual, dict) or not isinstance(actual.get("cases"), dict):
        return "the probe's observation is malformed"
    violations = actual.get("violations") or []
    if violations:
        return "the rules forbid what total() did: " + "; ".join(str(v) for v in violations)
    return None


def sum_bound(x: np.ndarray) -> tuple[float, float, int, int, float]:
    """(exact sum S, sum of |x|, n, L, bound) for a 1-D float64 array."""
    n = int(x.size)
    exact = math.fsum(x.tolist())
    abs_sum = math.fsum(np.abs(x).tolist())
    depth = max(1, math.ceil(math.log2(max(n, 2))))
    return exact, abs_sum, n, depth, 2.0 * U32 * abs(exact) + (depth * U32) ** 2 * abs_sum


def _case_problem(name: str, got: Any, expected_case: dict[str, Any]) -> tuple[str | None, float]:
    """(what is wrong with one case or None, error / bound)."""
    if not isinstance(got, dict):
        return f"{name}: no result", math.inf
    result = got.get("result")
    if isinstance(result, str):
        return f"{name}: total() {result}", math.inf
    if not _is_array(result):
        return f"{name}: total() returned {type(result).__name__}, not a tensor", math.inf
    if result.source != "torch":
        return f"{name}: total() returned a {result.source} array, not a torch.Tensor", math.inf
    if result.data.shape != ():
        return f"{name}: total() must return a 0-d tensor, got shape {list(result.data.shape)}", math.inf
    if result.dtype != "float32":
        return f"{name}: total() must return float32, got {result.dtype}", math.inf
    if got.get("input unchanged") is not True:
        return f"{name}: total() modified its input in place", math.inf
    x = np.asarray(expected_case["x"].data, dtype=np.float64).ravel()
    exact, abs_sum, n, depth, bound = sum_bound(x)
    value = float(result.data)
    err = abs(value - exact) if math.isfinite(value) else math.inf
    ratio = err / bound if bound > 0 else (0.0 if err == 0 else math.inf)
    if err > bound:
        return (
            f"{name}: total() = {value!r}, exact sum {exact!r}: error {err:.3g} exceeds the bound {bound:.3g} "
            f"= 2u|S| + (L*u)^2 * sum|x| with u = 2^-24, n = {n:,}, L = {depth}, sum|x| = {abs_sum:.4g}"
        ), ratio
    return None, ratio


def within_sum_bound(actual: Any, expected: Any) -> tuple[bool, str]:
    problem = _rules_problem(actual)
    if problem:
        return False, problem
    failures: list[str] = []
    worst = 0.0
    for name, expected_case in expected["cases"].items():
        failure, ratio = _case_problem(name, actual["cases"].get(name), expected_case)
        if failure:
            failures.append(failure)
        else:
            worst = max(worst, ratio)
    if failures:
        more = f" (and {len(failures) - 1} more failing case{'s' if len(failures) > 2 else ''})" if len(failures) > 1 else ""
        return False, failures[0] + more
    return True, f"every case within its bound; the largest error is {worst:.2g} of its bound"


# The steps of the hidden probe repeated_calls, told apart by the words of their case names: (words, reason, the step
# in general words). A case matching none is a first call on its tensor.
_STEPS = (
    ("its input is changed in place after", "result-shares-memory-with-x", "a result that changed when its input changed in place after the call"),
    ("after the caller changed", "result-kept-across-calls", "a call after the caller had changed an earlier result in place"),
    ("in place", "changed-in-place", "a call on a tensor whose values changed in place since an earlier call"),
    ("freed and rebuilt", "rebuilt-at-a-freed-address", "a call on a new tensor built where a freed one was"),
    ("a new view after", "rebuilt-at-a-freed-address", "a call on a new view of a buffer rewritten since an earlier call"),
    ("a new ", "look-alike", "a call on a new tensor of the same shape, dtype and strides as an earlier one, with other values"),
    ("a copy of", "look-alike", "a call on a copy of an earlier tensor with one element changed"),
)
_FIRST_CALL = ("first-call", "a first call on its tensor (or its result changed by a later call)")


def each_call_within_sum_bound(actual: Any, expected: Any) -> CheckResult | tuple[bool, str]:
    """within_sum_bound for a sequence of calls in one process: a failure names the first wrong step in general
    words and no value (which input and which sum stay out of the message), and says which kind of step it was."""
    problem = _rules_problem(actual)
    if problem:
        return False, problem
    wrong = [name for name, case in expected["cases"].items() if _case_problem(name, actual["cases"].get(name), case)[0]]
    if not wrong:
        return True, f"all {len(expected['cases'])} calls within their bounds"
    reason, step = next(((r, w) for words, r, w in _STEPS if words in wrong[0]), _FIRST_CALL)
    return CheckResult(
        False,
        f"{len(wrong)} of {len(expected['cases'])} calls in the sequence are off by more than their bound; the first is {step}",
        {"reason": reason},
    )
