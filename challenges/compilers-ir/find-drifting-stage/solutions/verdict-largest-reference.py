"""The report is right; the verdict compares the largest error with the largest reference value.

``max_abs`` and ``ratio`` follow the definition. But a stage is called out
of tolerance only when ``max|y - r| > atol + rtol * max|r|``: the largest
error against the tolerance of the largest value, as if the tolerance were
one number per output. An element with a small reference value that is off
by a few of its own tolerances passes whenever some other element is large,
so a stage that is out of tolerance by a small factor reads as healthy.
"""

from __future__ import annotations

import math

import numpy as np


def find_drifting_stage(stages, inputs):
    ref = [[np.asarray(o, np.float64) for o in stages[0].run(*b)] for b in inputs]
    first, errors = None, {}
    for st in stages[1:]:
        max_abs = ratio = 0.0
        out_of_tolerance = False
        for b, want in zip(inputs, ref, strict=True):
            for y, r in zip(st.run(*b), want, strict=True):
                y = np.asarray(y, np.float64)
                if not np.isfinite(y).all():
                    max_abs = ratio = math.inf
                    out_of_tolerance = True
                    continue
                d = np.abs(y - r)
                max_abs = max(max_abs, float(d.max(initial=0.0)))
                ratio = max(ratio, float((d / (st.atol + st.rtol * np.abs(r))).max(initial=0.0)))
                out_of_tolerance |= bool(d.max(initial=0.0) > st.atol + st.rtol * np.abs(r).max(initial=0.0))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and out_of_tolerance:
            first = st.name
    return {"first": first, "errors": errors}
