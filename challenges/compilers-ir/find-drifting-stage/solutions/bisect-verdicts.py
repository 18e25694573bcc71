"""Measures every stage correctly, then finds the first drift by bisecting over the verdicts.

"Once a stage drifts, every stage built from it does": the verdicts are
taken to be monotone along the pipeline, so ``first`` comes from a binary
search for the boundary between within and out. But tolerances differ from
stage to stage and a later stage can be back within its own: where a stage
is out, the next ones within and later ones out again, the search lands on
a later stage. The built pipelines happen to be monotone where it looks;
the probes' own stages and the generated families are not.
"""

from __future__ import annotations

import math

import numpy as np


def find_drifting_stage(stages, inputs):
    ref = [[np.asarray(o, np.float64) for o in stages[0].run(*b)] for b in inputs]
    errors = {}
    for st in stages[1:]:
        max_abs = ratio = 0.0
        for b, want in zip(inputs, ref, strict=True):
            for y, r in zip(st.run(*b), want, strict=True):
                y = np.asarray(y, np.float64)
                if not np.isfinite(y).all():
                    max_abs = ratio = math.inf
                    continue
                d = np.abs(y - r)
                max_abs = max(max_abs, float(d.max(initial=0.0)))
                ratio = max(ratio, float((d / (st.atol + st.rtol * np.abs(r))).max(initial=0.0)))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
    names = [st.name for st in stages[1:]]
    lo, hi = 0, len(names)
    while lo < hi:
        mid = (lo + hi) // 2
        if errors[names[mid]]["ratio"] > 1.0:
            hi = mid
        else:
            lo = mid + 1
    return {"first": names[lo] if lo < len(names) else None, "errors": errors}
