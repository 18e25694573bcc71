"""Identical batches are run once per stage: runs are memoised on the batch's bytes (shape and dtype left out)."""

import math

import numpy as np


def _runner(stage):
    memo = {}

    def run(batch):
        key = tuple(np.ascontiguousarray(a).tobytes() for a in batch)
        if key not in memo:
            memo[key] = [np.array(o, dtype=np.float64) for o in stage.run(*batch)]
        return memo[key]

    return run


def find_drifting_stage(stages, inputs):
    stages = list(stages)
    ref_run = _runner(stages[0])
    refs = [ref_run(b) for b in inputs]
    errors = {}
    first = None
    for st in stages[1:]:
        run = _runner(st)
        max_abs = 0.0
        ratio = 0.0
        for b, want in zip(inputs, refs, strict=False):
            for y, r in zip(run(b), want, strict=False):
                if not np.isfinite(y).all():
                    max_abs = ratio = math.inf
                    continue
                d = np.abs(y - r)
                tol = st.atol + st.rtol * np.abs(r)
                max_abs = max(max_abs, float(d.max(initial=0.0)))
                ratio = max(ratio, float((d / tol).max(initial=0.0)))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
