"""Correct alternative: all outputs of a stage flattened into one float64 vector per stage, the verdict
decided exactly (fractions) for any element whose float64 ratio is near 1."""

import math
from fractions import Fraction

import numpy as np


def _flat(arrays):
    parts = [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays]
    return np.concatenate(parts) if parts else np.zeros(0)


def find_drifting_stage(stages, inputs):
    seq = [stages[i] for i in range(len(stages))]
    ref = seq[0]
    want = _flat([o for b in inputs for o in ref.run(*b)])
    absr = np.abs(want)
    errors = {}
    first = None
    for st in seq[1:]:
        got = _flat([o for b in inputs for o in st.run(*b)])
        atol, rtol = float(st.atol), float(st.rtol)
        if got.size and not np.isfinite(got).all():
            errors[st.name] = {"max_abs": math.inf, "ratio": math.inf}
            if first is None:
                first = st.name
            continue
        d = np.abs(got - want)
        q = d / (atol + rtol * absr)
        max_abs = float(d.max()) if d.size else 0.0
        ratio = float(q.max()) if q.size else 0.0
        out = ratio > 1.0 + 1e-9
        if not out and q.size:
            near = np.nonzero(q > 1.0 - 1e-9)[0]
            fa, fr = Fraction(atol), Fraction(rtol)
            for i in near.tolist():
                if abs(Fraction(float(got[i])) - Fraction(float(want[i]))) > fa + fr * abs(Fraction(float(want[i]))):
                    out = True
                    break
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and out:
            first = st.name
    return {"first": first, "errors": errors}
