"""The errors are measured against the reference, but the verdict against the stage before (red team round 1).

``first`` names the first stage whose own step from the previous stage
leaves its tolerance. Drift that adds up across stages, each step small,
is never called out; and a stage moving the output back toward the
reference by a large step is called out though it is within.
"""

from __future__ import annotations

import math

import numpy as np


def _errors(got, want, rtol, atol):
    max_abs = ratio = 0.0
    for g, r in zip(got, want, strict=True):
        g = np.asarray(g, dtype=np.float64)
        if not np.all(np.isfinite(g)):
            return math.inf, math.inf
        diff = np.abs(g - r)
        max_abs = max(max_abs, float(diff.max(initial=0.0)))
        ratio = max(ratio, float((diff / (atol + rtol * np.abs(r))).max(initial=0.0)))
    return max_abs, ratio


def find_drifting_stage(stages, inputs):
    runs = [[[np.asarray(o, dtype=np.float64) for o in st.run(*b)] for b in inputs] for st in stages]
    errors = {}
    first = None
    for i in range(1, len(stages)):
        st = stages[i]
        max_abs = ratio = step = 0.0
        for k in range(len(inputs)):
            a, q = _errors(runs[i][k], runs[0][k], st.rtol, st.atol)
            max_abs, ratio = max(max_abs, a), max(ratio, q)
            prev = runs[i - 1][k]
            if all(np.all(np.isfinite(p)) for p in prev):
                step = max(step, _errors(runs[i][k], prev, st.rtol, st.atol)[1])
            elif q > 1.0:
                step = math.inf  # previous stage already broken: treat as a step if this one is too
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and step > 1.0:
            first = st.name
    return {"first": first, "errors": errors}
