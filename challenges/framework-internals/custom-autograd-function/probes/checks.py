"""Custom check for custom-autograd-function's second-order probes, run in the trusted worker.

``near_truth`` judges the values, gradients and Hessian-vector products of
``checked_against_truth`` (probes/hidden.py) against the float64 truth that
the probe computed from closed forms in the reference's run, not against the
reference's own rounding. Each element may differ from the truth by
``ULPS`` rounding units of its dtype times its ``scale`` (the magnitude of
the terms that make it, times ``1 + |y|``: see ``truth`` in the probes), so
any correct formula passes in float32 and float64 alike, while a missing or
wrong term (a saved softmax, a once-differentiable backward) is off by the
size of the term. Infinities (``y`` on a fully masked row) must match
exactly; NaN never passes. The message names the value and the band of the
error over its bound, never an expected value (a hidden probe's view is
composed from templates anyway).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

ULPS = 16  # rounding units of that magnitude: the reference and a softmax-based alternative stay within 1 (measured)
KEYS = ("y", "x.grad", "hvp")


def _array(value: Any) -> np.ndarray | None:
    data = getattr(value, "data", None)
    return data if isinstance(data, np.ndarray) else None


def _one(actual: Any, expected: dict[str, Any]) -> tuple[bool, str, np.ndarray | None]:
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed", None
    if actual.get("error") != expected["error"]:
        return False, "computing the second derivative raised an exception" if actual.get("error") else "a derivative is missing", None
    if expected["error"] is not None:
        return True, "", None
    eps = float(np.finfo(np.float32 if expected["dtype"] == "float32" else np.float64).eps)
    tiny = float(np.finfo(np.float32 if expected["dtype"] == "float32" else np.float64).tiny)
    for key in KEYS:
        got = _array(actual.get(key))
        want = _array(expected["truth"][key])
        scale = _array(expected["scale"][key])
        if got is None or want is None or scale is None:
            return False, f"{key} is not a tensor", None
        if got.shape != want.shape:
            return False, f"{key} has the wrong shape", None
        if str(getattr(actual.get(key), "dtype", "")) != expected["dtype"]:
            return False, f"{key} is not {expected['dtype']}", None
        got64 = got.astype(np.float64)
        if np.isnan(got64).any():
            return False, f"{key} holds NaN where the true value is finite", None
        infinite = np.isinf(want)
        if not np.array_equal(np.isinf(got64), infinite) or not np.array_equal(got64[infinite], want[infinite]):
            return False, f"{key} is infinite where the true value is not, or the other way round", None
        bound = ULPS * eps * scale + tiny
        error = np.where(infinite, 0.0, np.abs(np.where(infinite, 0.0, got64) - np.where(infinite, 0.0, want)))
        ratio = error / bound
        if (ratio > 1).any():
            worst = float(ratio.max())
            band = f"{worst:.3g}" if math.isfinite(worst) else "an unbounded number of"
            return False, f"{key} differs from the float64 truth by up to {band} times what rounding allows", ratio
    return True, "", None


def near_truth(actual: Any, expected: Any) -> tuple[bool, str] | tuple[bool, str, dict[str, np.ndarray]]:
    cases = {"": expected} if "truth" in expected else expected
    for label, sub in cases.items():
        passed, message, ratio = _one(actual if not label else (actual or {}).get(label) if isinstance(actual, dict) else None, sub)
        if not passed:
            where = f"[{label}] " if label else ""
            if ratio is not None:
                return False, where + message, {"ratio": ratio}
            return False, where + message
    return True, "every value is within rounding of the float64 truth"
