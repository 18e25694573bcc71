"""Custom check for onnx-decompose-unsupported, run in the trusted worker.

The truth is the original model run by onnxruntime in the reference's run
(``expected["original"]``), not the reference's rewrite: the candidate's
rewritten model must reproduce the model it was given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RTOL = 1e-4
ATOL = 1e-5


def _arr(value: Any) -> np.ndarray | None:
    return value.data if hasattr(value, "data") and hasattr(value, "dtype") and hasattr(value, "source") else None


def decomposition_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed"
    if "error" in actual:
        return False, str(actual["error"])
    changed = actual.get("foreign_nodes_changed", 0)
    if changed:
        return False, (
            f"decompose rewrote or removed {changed} node(s) of other domains than the default one; "
            "only default-domain Gelu, LayerNormalization, Softmax and HardSwish are to be rewritten"
        )
    left = actual.get("unsupported_left")
    if left:
        return False, "after decompose, these op types are still unsupported by the accelerator: " + ", ".join(left)
    if actual.get("rewritten_interface") != expected["interface"]:
        return False, (
            f"the rewritten graph's inputs/outputs are {actual.get('rewritten_interface')}; "
            f"they must stay {expected['interface']}"
        )
    if actual.get("check_model") != "ok":
        return False, f"onnx.checker.check_model(full_check=True) rejects the rewritten model: {actual.get('check_model')}"
    outputs = actual.get("outputs")
    if not isinstance(outputs, dict):
        return False, str(outputs)
    worst = 0.0
    for name, want in expected["original"].items():
        got = _arr(outputs.get(name))
        ref = _arr(want)
        if got is None:
            return False, f"the rewritten model has no output {name!r}"
        if got.shape != ref.shape or got.dtype != ref.dtype:
            return False, f"output {name!r}: {got.dtype}{list(got.shape)}, the original model gives {ref.dtype}{list(ref.shape)}"
        g, r = got.astype(np.float64), ref.astype(np.float64)
        if not np.all(np.isfinite(g)):
            bad = int((~np.isfinite(g)).sum())
            return False, f"output {name!r}: {bad} of {g.size} values are NaN or infinite; the original model's are finite"
        err = np.abs(g - r)
        allowed = ATOL + RTOL * np.abs(r)
        ratio = err / allowed
        i = int(np.argmax(ratio))
        if ratio.flat[i] > 1.0:
            idx = [int(v) for v in np.unravel_index(i, g.shape)]
            return False, (
                f"output {name!r} differs from the original model's at {int((ratio > 1).sum())} of {g.size} elements; "
                f"worst at {idx}: got {g.flat[i]:.7g}, original {r.flat[i]:.7g} (rtol={RTOL:g}, atol={ATOL:g})"
            )
        worst = max(worst, float(err.max()))
    return True, f"every node is supported and the outputs match the original model (max abs error {worst:.2g})"
