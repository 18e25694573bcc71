"""Red team round 2: the stage output is taken to float64 but the reference is left float32, so
under NumPy 2 (NEP 50) `atol + rtol * np.abs(r)` is computed in float32: the tolerance
is rounded to float32 (and a tiny atol can underflow), not float64 as the statement says."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference, rest = stages[0], stages[1:]
    want = [list(reference.run(*batch)) for batch in inputs]  # float32, "always finite"
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*batch), expected, strict=False):
                g = np.asarray(g, dtype=np.float64)
                if not np.all(np.isfinite(g)):
                    max_abs = ratio = math.inf
                    continue
                diff = np.abs(g - r)
                tol = stage.atol + stage.rtol * np.abs(r)
                max_abs = max(max_abs, float(diff.max(initial=0.0)))
                ratio = max(ratio, float((diff / tol).max(initial=0.0)))
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
