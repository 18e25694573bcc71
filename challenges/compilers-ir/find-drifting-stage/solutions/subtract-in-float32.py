"""Red team round 2: the difference y - r is taken in the arrays' own (promoted) dtype and only then
cast to float64 (np.abs(y - r).astype(float64)); with float32/float16 outputs the
subtraction rounds (or overflows near the float32 limit) instead of being done in
float64 as the statement says. The tolerance itself is computed in float64."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference, rest = stages[0], stages[1:]
    want = [list(reference.run(*batch)) for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*batch), expected, strict=False):
                g, r = np.asarray(g), np.asarray(r)
                if not np.all(np.isfinite(g)):
                    max_abs = ratio = math.inf
                    continue
                diff = np.abs(g - r).astype(np.float64)
                tol = stage.atol + stage.rtol * np.abs(r.astype(np.float64))
                max_abs = max(max_abs, float(diff.max(initial=0.0)))
                ratio = max(ratio, float((diff / tol).max(initial=0.0)))
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
