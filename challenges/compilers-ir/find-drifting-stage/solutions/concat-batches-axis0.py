"""Vectorised: each output is concatenated over the batches along axis 0, then compared once."""

import math

import numpy as np


def _gather(stage, inputs):
    per_batch = [stage.run(*b) for b in inputs]
    return [np.concatenate([np.atleast_1d(np.asarray(outs[k], dtype=np.float64)) for outs in per_batch], axis=0) for k in range(len(per_batch[0]))]


def find_drifting_stage(stages, inputs):
    stages = list(stages)
    want = _gather(stages[0], inputs)
    errors = {}
    first = None
    for st in stages[1:]:
        got = _gather(st, inputs)
        max_abs = ratio = 0.0
        for y, r in zip(got, want, strict=False):
            if not np.isfinite(y).all():
                max_abs = ratio = math.inf
                break
            d = np.abs(y - r)
            max_abs = max(max_abs, float(d.max(initial=0.0)))
            ratio = max(ratio, float((d / (st.atol + st.rtol * np.abs(r))).max(initial=0.0)))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
