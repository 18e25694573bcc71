"""Fast NaN/inf test: a single np.isfinite on the sum of each raw output (NaN and inf both propagate into a sum)."""

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
                with np.errstate(over="ignore", invalid="ignore"):
                    bad = not np.isfinite(np.sum(y))
                if bad:
                    max_abs = ratio = math.inf
                    continue
                d = np.abs(np.asarray(y, dtype=np.float64) - r)
                tol = st.atol + st.rtol * np.abs(r)
                max_abs = max(max_abs, float(d.max(initial=0.0)))
                ratio = max(ratio, float((d / tol).max(initial=0.0)))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
