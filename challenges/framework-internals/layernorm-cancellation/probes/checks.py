"""Custom check for layernorm-cancellation, run in the trusted worker.

The truth never comes from a solution: the check takes the inputs of the
reference's run (the expected observation) and computes, per row, in float64
(two-pass, so the truth itself does not cancel):

    mu = mean(x),  var = mean((x - mu)^2),  r = 1 / sqrt(var + eps),
    y_i = (x_i - mu) * r * w_i + b_i.

With u32 = 2^-24, L = ceil(log2 max(D, 2)), A = mean(|x|), and u, s_min the
unit roundoff and smallest subnormal of x's dtype (see the statement):

    mean:  |m - mu|       <= dmu = (2L + 4) u32 A
    rstd:  |rstd - r|     <= er * r,   er = ((2L + 8) u32 (var + A sqrt(var)) + dmu^2) / (2 (var + eps)) + 2 u32
    y:     |y_i - y*_i|   <= 2u |y*_i| + |w_i| r (|x_i - mu| (er + 4 u32) + dmu) + 4 u32 |b_i| + s_min
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


def _idx(flat: int, shape: tuple[int, ...]) -> list[int]:
    return [int(i) for i in np.unravel_index(flat, shape)] if shape else []


def truth_and_bounds(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float, dtype: str) -> dict[str, np.ndarray]:
    """float64 truth and the allowed error of every output element."""
    d = x.shape[-1]
    depth = max(1, math.ceil(math.log2(max(d, 2))))
    mu = x.mean(-1, keepdims=True)
    centered = x - mu
    var = (centered * centered).mean(-1, keepdims=True)
    r = 1.0 / np.sqrt(var + eps)
    y = centered * r * w + b
    a = np.abs(x).mean(-1, keepdims=True)
    dmu = (2 * depth + 4) * U32 * a
    er = ((2 * depth + 8) * U32 * (var + a * np.sqrt(var)) + dmu * dmu) / (2 * (var + eps)) + 2 * U32
    y_allowed = (
        2 * UNIT_ROUNDOFF[dtype] * np.abs(y)
        + np.abs(w) * r * (np.abs(centered) * (er + 4 * U32) + dmu)
        + 4 * U32 * np.abs(b)
        + SMALLEST_SUBNORMAL[dtype]
    )
    return {
        "mean": mu[..., 0],
        "mean allowed": dmu[..., 0],
        "rstd": r[..., 0],
        "rstd allowed": (er * r)[..., 0],
        "y": y,
        "y allowed": y_allowed,
    }


def _output_problem(name: str, label: str, got: Any, want_dtype: str, want_shape: tuple[int, ...]) -> str | None:
    if not _is_array(got) or got.source != "torch":
        return f"{name}: {label} must be a torch.Tensor"
    if got.dtype != want_dtype:
        return f"{name}: {label} has dtype {got.dtype}; it must be {want_dtype}"
    if tuple(got.data.shape) != want_shape:
        return f"{name}: {label} has shape {list(got.data.shape)}; it must be {list(want_shape)}"
    return None


def _case_problem(name: str, got: Any, expected_case: dict[str, Any]) -> tuple[str | None, float]:
    """(what is wrong with one case or None, the largest error / bound)."""
    if not isinstance(got, dict):
        return f"{name}: no result", math.inf
    outputs = got.get("outputs")
    if isinstance(outputs, str):
        return f"{name}: layer_norm() {outputs}", math.inf
    if got.get("inputs unchanged") is not True:
        return f"{name}: layer_norm() modified an input in place", math.inf
    x_arr = expected_case["x"]
    dtype = x_arr.dtype
    shape = tuple(x_arr.data.shape)
    for label, want_dtype, want_shape in (("y", dtype, shape), ("mean", "float32", shape[:-1]), ("rstd", "float32", shape[:-1])):
        problem = _output_problem(name, label, outputs.get(label), want_dtype, want_shape)
        if problem:
            return problem, math.inf
    x = np.asarray(x_arr.data, dtype=np.float64)
    w = np.asarray(expected_case["weight"].data, dtype=np.float64)
    b = np.asarray(expected_case["bias"].data, dtype=np.float64)
    eps = float(expected_case["eps"])
    truth = truth_and_bounds(x, w, b, eps, dtype)
    worst = 0.0
    for label in ("mean", "rstd", "y"):
        got_v = np.asarray(outputs[label].data, dtype=np.float64).reshape(np.shape(truth[label]))
        want = truth[label]
        allowed = truth[f"{label} allowed"]
        bad = ~np.isfinite(got_v)
        if bad.any():
            i = int(np.argmax(bad))
            return (
                f"{name}: {label} has {int(bad.sum())} non-finite values; at index {_idx(i, got_v.shape)} "
                f"it is {float(got_v.flat[i])!r}, the exact value is {float(want.flat[i])!r}"
            ), math.inf
        ratio = np.abs(got_v - want) / allowed
        i = int(np.argmax(ratio)) if ratio.size else 0
        if ratio.size and ratio.flat[i] > 1.0:
            err = abs(float(got_v.flat[i]) - float(want.flat[i]))
            rel = err / abs(float(want.flat[i])) if want.flat[i] != 0 else math.inf
            over = int((ratio > 1.0).sum())
            return (
                f"{name}: {label} at index {_idx(i, got_v.shape)} is {float(got_v.flat[i])!r}, the exact value is "
                f"{float(want.flat[i])!r}: error {err:.3g} (relative {rel:.3g}) exceeds the bound {float(allowed.flat[i]):.3g}. "
                f"{over} of {got_v.size} {label} values are over their bound."
            ), float(ratio.flat[i])
        if ratio.size:
            worst = max(worst, float(ratio.flat[i]))
    return None, worst


def within_layer_norm_bound(actual: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(actual, dict) or not isinstance(actual.get("cases"), dict):
        return False, "the probe's observation is malformed"
    violations = actual.get("violations") or []
    if violations:
        return False, "the rules forbid what your code did: " + "; ".join(str(v) for v in violations)
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
    return True, f"every case within its bounds; the largest error is {worst:.2g} of its bound"
