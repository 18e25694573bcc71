"""The difference cleaned with np.nan_to_num (a NaN counts as an infinite error), so no warning and no NaN reaches the maxima."""

from __future__ import annotations

import numpy as np


def find_drifting_stage(stages, inputs):
    reference, *rest = stages
    want = [[np.asarray(o, dtype=np.float64) for o in reference.run(*batch)] for batch in inputs]
    errors = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*batch), expected, strict=False):
                g = np.asarray(g, dtype=np.float64)
                with np.errstate(invalid="ignore", over="ignore"):
                    diff = np.nan_to_num(np.abs(g - r), nan=np.inf)
                    q = diff / (stage.atol + stage.rtol * np.abs(r))
                max_abs = max(max_abs, float(diff.max(initial=0.0)))
                ratio = max(ratio, float(q.max(initial=0.0)))
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
