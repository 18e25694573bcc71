"""Correct, written differently: np.isclose for the verdict, errors accumulated per stage.

The verdict of a stage is np.isclose(y, r, rtol, atol) on every element of
every output of every batch (NaN is never close, which is what we want);
the numbers come from the same comparison (a maximum over an output with
no elements is 0). The reference outputs are computed once and reused.
"""

from __future__ import annotations

import numpy as np


def find_drifting_stage(stages, inputs):
    ref = [tuple(o.astype(np.float64) for o in stages[0].run(*b)) for b in inputs]
    first, errors = None, {}
    for st in list(stages)[1:]:  # a sequence need not take slices (a deque does not)
        worst_abs, worst_ratio, bad = 0.0, 0.0, False
        for b, want in zip(inputs, ref, strict=False):
            for y, r in zip(st.run(*b), want, strict=True):
                y = y.astype(np.float64)
                if not np.isfinite(y).all():
                    worst_abs = worst_ratio = float("inf")
                    bad = True
                    continue
                bad |= not np.isclose(y, r, rtol=st.rtol, atol=st.atol).all()
                d = np.abs(y - r)
                worst_abs = max(worst_abs, d.max(initial=0.0))
                worst_ratio = max(worst_ratio, (d / (st.atol + st.rtol * np.abs(r))).max(initial=0.0))
        errors[st.name] = {"max_abs": float(worst_abs), "ratio": float(worst_ratio)}
        if bad and first is None:
            first = st.name
    return {"first": first, "errors": errors}
