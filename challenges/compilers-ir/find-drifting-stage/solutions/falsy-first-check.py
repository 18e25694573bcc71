"""Correct arithmetic; the verdict is kept with `if not first and ratio > 1` (an empty-string name counts as unset)."""

import math

import numpy as np


def find_drifting_stage(stages, inputs):
    stages = list(stages)
    ref_stage, rest = stages[0], stages[1:]
    refs = [[np.array(o, dtype=np.float64) for o in ref_stage.run(*b)] for b in inputs]
    errors = {}
    first = None
    for st in rest:
        max_abs = 0.0
        ratio = 0.0
        for b, want in zip(inputs, refs, strict=False):
            for y, r in zip(st.run(*b), want, strict=False):
                y = np.asarray(y, dtype=np.float64)
                if not np.isfinite(y).all():
                    max_abs = ratio = math.inf
                    continue
                d = np.abs(y - r)
                tol = st.atol + st.rtol * np.abs(r)
                max_abs = max(max_abs, float(d.max(initial=0.0)))
                ratio = max(ratio, float((d / tol).max(initial=0.0)))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if not first and ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
