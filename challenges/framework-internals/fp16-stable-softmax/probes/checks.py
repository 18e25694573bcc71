"""Custom check for fp16-stable-softmax, run in the trusted worker.

The truth never comes from a solution: the check takes the inputs of the
reference's run (the expected observation), computes log-softmax in float64,

    t_i = (x_i - max x) - log(sum_j exp(x_j - max x)),    p_i = exp(t_i),

and holds each output element of the candidate to (see the statement)

    E_i = u32 * (|t_i| + 2 L + 16),         u32 = 2^-24, L = ceil(log2 max(n, 2))
    softmax:      |y_i - p_i| <= (2 u + E_i) p_i + s_min
    log_softmax:  |y_i - t_i| <= 2 u |t_i| + E_i + s_min

where u and s_min are the unit roundoff and the smallest subnormal of the
output dtype. A masked input (-inf) must give exactly -inf from log_softmax.

A failing check returns a third item, the first failing case's per-element
error over its bound, which the grader draws as a heat-map on the page.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

U32 = 2.0**-24
UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24}
SMALLEST_SUBNORMAL = {"float16": 2.0**-24, "bfloat16": 2.0**-133, "float32": 2.0**-149}


def _is_array(value: Any) -> bool:
    return hasattr(value, "data") and hasattr(value, "dtype") and hasattr(value, "source")


def true_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    """float64 log-softmax along dim; every slice has at least one finite entry."""
    top = np.max(x, axis=dim, keepdims=True)
    shifted = x - top
    with np.errstate(under="ignore"):
        total = np.exp(shifted).sum(axis=dim, keepdims=True)
    return shifted - np.log(total)


def _fmt_index(flat: int, shape: tuple[int, ...]) -> list[int]:
    return [int(i) for i in np.unravel_index(flat, shape)] if shape else []


def _case_problem(name: str, got: Any, expected_case: dict[str, Any]) -> tuple[str | None, float, dict[str, Any] | None]:
    """(what is wrong with one case or None, the largest error / bound, the case's error report for the grader)."""
    if not isinstance(got, dict):
        return f"{name}: no result", math.inf, None
    y = got.get("y")
    fn = expected_case["fn"]
    if isinstance(y, str):
        return f"{name}: {fn}() {y}", math.inf, None
    if not _is_array(y) or y.source != "torch":
        return f"{name}: {fn}() must return a torch.Tensor", math.inf, None
    x_arr = expected_case["x"]
    dtype = x_arr.dtype
    if y.dtype != dtype:
        return f"{name}: {fn}() returned {y.dtype}; it must return the input's dtype, {dtype}", math.inf, None
    if tuple(y.data.shape) != tuple(x_arr.data.shape):
        return f"{name}: {fn}() returned shape {list(y.data.shape)}; the input's shape is {list(x_arr.data.shape)}", math.inf, None
    if got.get("input unchanged") is not True:
        return f"{name}: {fn}() modified its input in place", math.inf, None
    if x_arr.data.size == 0:
        return None, 0.0, None
    x = np.asarray(x_arr.data, dtype=np.float64)
    dim = int(expected_case["dim"])
    n = x.shape[dim]
    depth = max(1, math.ceil(math.log2(max(n, 2))))
    u, s_min = UNIT_ROUNDOFF[dtype], SMALLEST_SUBNORMAL[dtype]
    t_log = true_log_softmax(x, dim)
    masked = np.isneginf(t_log)
    slack = U32 * (np.where(masked, 0.0, np.abs(t_log)) + 2 * depth + 16)
    got_v = np.asarray(y.data, dtype=np.float64)
    if fn == "softmax":
        truth = np.exp(t_log)
        allowed = (2 * u + slack) * truth + s_min
        must_be_neg_inf = np.zeros_like(masked)
    else:
        truth = t_log
        allowed = 2 * u * np.where(masked, 0.0, np.abs(t_log)) + slack + s_min
        must_be_neg_inf = masked
    report = _report(name, dtype, got_v, truth, allowed, must_be_neg_inf)
    nan = np.isnan(got_v)
    if nan.any():
        idx = _fmt_index(int(np.argmax(nan)), got_v.shape)
        return f"{name}: {fn}() has {int(nan.sum())} NaN values, the first at index {idx}", math.inf, report
    wrong_inf = np.isinf(got_v) & ~(must_be_neg_inf & np.isneginf(got_v))
    if wrong_inf.any():
        i = int(np.argmax(wrong_inf))
        return (
            f"{name}: {fn}() has {int(wrong_inf.sum())} infinite values where the exact result is finite; "
            f"the first at index {_fmt_index(i, got_v.shape)}: got {float(got_v.flat[i])!r}, exact {float(truth.flat[i])!r}"
        ), math.inf, report
    missing_inf = must_be_neg_inf & ~np.isneginf(got_v)
    if missing_inf.any():
        i = int(np.argmax(missing_inf))
        return (
            f"{name}: log_softmax() of a masked (-inf) entry must be -inf; at index {_fmt_index(i, got_v.shape)} "
            f"it returned {float(got_v.flat[i])!r}"
        ), math.inf, report
    finite = ~must_be_neg_inf
    err = np.where(finite, np.abs(got_v - np.where(finite, truth, 0.0)), 0.0)
    ratio = err / allowed
    i = int(np.argmax(ratio))
    worst = float(ratio.flat[i])
    if worst > 1.0:
        over = int((ratio > 1.0).sum())
        formula = "(2u + E) p + s_min" if fn == "softmax" else "2u|t| + E + s_min"
        return (
            f"{name}: {fn}() is off by {err.flat[i]:.3g} at index {_fmt_index(i, got_v.shape)} "
            f"(got {float(got_v.flat[i])!r}, exact {float(truth.flat[i])!r}); the {dtype} bound there is {allowed.flat[i]:.3g} "
            f"= {formula} with u = {u:.3g}, E = {slack.flat[i]:.3g}. {over} of {got_v.size} elements are over their bound."
        ), worst, report
    return None, worst, None


def _report(name: str, dtype: str, got: np.ndarray, truth: np.ndarray, allowed: np.ndarray, must_be_neg_inf: np.ndarray) -> dict[str, Any]:
    """The grader's error report of one case (grader/error_report.py): each element's error over its own bound.

    A masked entry that is -inf as it must be has no error; every other
    non-finite output is infinitely far out.
    """
    exact_inf = must_be_neg_inf & np.isneginf(got)
    finite = np.isfinite(got) & ~must_be_neg_inf
    with np.errstate(invalid="ignore"):
        err = np.where(finite, np.abs(got - np.where(finite, truth, 0.0)), 0.0)
    ratio = np.where(finite, err / allowed, np.where(exact_inf, 0.0, np.inf))
    return {"ratio": ratio, "abs_error": err, "truth": truth, "actual": got, "dtype": dtype, "label": name}


def within_softmax_bound(actual: Any, expected: Any) -> tuple[bool, str] | tuple[bool, str, dict[str, Any] | None]:
    if not isinstance(actual, dict) or not isinstance(actual.get("cases"), dict):
        return False, "the probe's observation is malformed"
    # A probe of repeated calls records whether its sequence reused what it is meant to (a freed tensor's id, an
    # earlier data_ptr). Only the reference's run is read, so validation notices a probe that stopped testing that.
    setup = expected.get("setup") if isinstance(expected, dict) else None
    if isinstance(setup, dict) and not all(setup.values()):
        missed = ", ".join(name for name, done in setup.items() if not done)
        return False, f"the probe's own setup failed in the reference's run ({missed}): the probe must be fixed"
    violations = actual.get("violations") or []
    if violations:
        return False, "the rules forbid what your code did: " + "; ".join(str(v) for v in violations)
    failures: list[str] = []
    reports: list[dict[str, Any]] = []
    worst = 0.0
    for name, expected_case in expected["cases"].items():
        failure, ratio, report = _case_problem(name, actual["cases"].get(name), expected_case)
        if failure:
            failures.append(failure)
            if report is not None:
                reports.append(report)
        else:
            worst = max(worst, ratio)
    if failures:
        more = f" (and {len(failures) - 1} more failing case{'s' if len(failures) > 2 else ''})" if len(failures) > 1 else ""
        # The first failing case's report: the heat-map of the case the message names first, when it has one.
        return False, failures[0] + more, (reports[0] if reports else None)
    return True, f"every case within its bound; the largest error is {worst:.2g} of its bound"
