"""Red team round 2: per-(batch, output) maxima are combined with Python's max(), and NaN is
turned into inf only at the end; max([1.0, nan]) is 1.0, so a NaN that is not in the
first batch's first output is silently dropped (only the first one survives)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference, rest = stages[0], stages[1:]
    want = [[np.asarray(o, dtype=np.float64) for o in reference.run(*batch)] for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        abs_parts, ratio_parts = [], []
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*batch), expected, strict=False):
                diff = np.abs(np.asarray(g, dtype=np.float64) - r)
                abs_parts.append(float(diff.max(initial=0.0)))
                ratio_parts.append(float((diff / (stage.atol + stage.rtol * np.abs(r))).max(initial=0.0)))
        max_abs, ratio = max(abs_parts), max(ratio_parts)
        if not (math.isfinite(max_abs) and math.isfinite(ratio)):
            max_abs = ratio = math.inf
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
