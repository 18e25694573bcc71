"""Computes |y - r| in place in the array ``np.asarray(y, np.float64)`` (red team round 1).

When a stage returns float64 arrays, np.asarray does not copy them, so the
stage's own outputs are overwritten with |y - r|. A stage that caches its
results then hands the overwritten array to the next stage, the next batch
or its next output, which is measured wrong; and a read-only array raises.
"""

from __future__ import annotations

import math

import numpy as np


def find_drifting_stage(stages, inputs):
    ref = stages[0]
    want = [[np.asarray(o, dtype=np.float64) for o in ref.run(*b)] for b in inputs]
    errors = {}
    first = None
    for st in stages[1:]:
        max_abs = ratio = 0.0
        for b, rs in zip(inputs, want, strict=True):
            outs = st.run(*b)
            if len(outs) != len(rs):
                raise ValueError("output count differs")
            for y, r in zip(outs, rs, strict=True):
                d = np.asarray(y, dtype=np.float64)
                if not np.isfinite(d).all():
                    max_abs = ratio = math.inf
                    continue
                d -= r
                np.abs(d, out=d)
                if d.size:
                    max_abs = max(max_abs, float(d.max()))
                    d /= st.atol + st.rtol * np.abs(r)
                    ratio = max(ratio, float(d.max()))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = st.name
    return {"first": first, "errors": errors}
