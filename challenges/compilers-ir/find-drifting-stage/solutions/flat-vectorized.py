"""Correct, written differently: every output of every batch flattened into one float64 vector per stage (red team round 1).

One vectorised pass per stage: any non-finite value gives inf, an empty
vector gives 0, and the verdict is ratio > 1.
"""

from __future__ import annotations

import math

import numpy as np


def _flat(outputs):
    parts = [np.asarray(o, dtype=np.float64).ravel() for o in outputs]
    return np.concatenate(parts) if parts else np.zeros(0)


def find_drifting_stage(stages, inputs):
    ref = stages[0]
    r = np.concatenate([_flat(ref.run(*b)) for b in inputs]) if inputs else np.zeros(0)
    errors = {}
    first = None
    for st in list(stages)[1:]:  # a sequence need not take slices (a deque does not)
        y = np.concatenate([_flat(st.run(*b)) for b in inputs]) if inputs else np.zeros(0)
        if y.shape != r.shape:
            raise ValueError("stage output size differs from the reference")
        if not np.isfinite(y).all():
            max_abs = ratio = math.inf
        elif y.size == 0:
            max_abs = ratio = 0.0
        else:
            d = np.abs(y - r)
            max_abs = float(d.max())
            ratio = float((d / (st.atol + st.rtol * np.abs(r))).max())
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = st.name
    return {"first": first, "errors": errors}
