"""Custom checks for register-autograd-for-custom-op (run in the trusted worker)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _array(value: Any) -> np.ndarray:
    return np.asarray(getattr(value, "data", value), dtype=np.float64)


def inplace_guarded(actual: Any, expected: Any) -> tuple[bool, str]:
    """Pass if backward refused an input changed in place, or used the values the forward saw.

    The truth is computed here in float64 from the reference's inputs: the
    gradients at the inputs' values *before* the in-place update.
    """
    if not isinstance(actual, dict) or not isinstance(expected, dict):
        return False, "the probe did not return its observation"
    error = actual.get("error")
    if error is not None:
        if error == "RuntimeError" and actual.get("mentions in-place") is True:
            return True, "backward refused the input modified in place"
        return False, f"backward raised {error}, not autograd's RuntimeError about an in-place modification"
    inputs = expected["inputs"]
    table = _array(inputs["table"])
    indices = np.asarray(inputs["indices"].data, dtype=np.int64)
    weights = _array(inputs["weights"])
    upstream = _array(inputs["upstream"])
    scale = float(inputs["scale"])
    grad_weights = scale * np.sum(upstream * table[indices], axis=-1)
    grad_table = np.zeros_like(table)
    np.add.at(grad_table, indices.reshape(-1), (scale * weights[..., None] * upstream).reshape(-1, table.shape[1]))
    for name, truth in (("weights.grad", grad_weights), ("table.grad", grad_table)):
        got = actual.get(name)
        if got is None:
            return False, f"{name} is None"
        got = _array(got)
        if got.shape != truth.shape:
            return False, f"{name} has the wrong shape"
        if not np.allclose(got, truth, rtol=1e-9, atol=1e-12):
            return False, (
                f"{name} does not match the gradient at the inputs' values before the in-place update: "
                "backward used tensors that changed after the forward"
            )
    return True, "backward used the values the forward saw"


def inplace_guarded_cases(actual: Any, expected: Any) -> tuple[bool, str]:
    """:func:`inplace_guarded` on each named case of the observation; all must pass."""
    if not isinstance(actual, dict) or not isinstance(expected, dict) or set(actual) != set(expected):
        return False, "the probe did not return its observation"
    for name in expected:
        ok, message = inplace_guarded(actual[name], expected[name])
        if not ok:
            return False, f"{name}: {message}"
    return True, "each update was refused or did not change the gradients"
