"""Checks the first input batch and the first output only.

Fast, and right whenever the drift shows everywhere. It misses a drift that
only some inputs trigger (activations with a large offset in the last
batch) and a drift in a model's second output.
"""

from __future__ import annotations

import numpy as np


def find_drifting_stage(stages, inputs):
    batch = inputs[0]
    r = stages[0].run(*batch)[0].astype(np.float64)
    first, errors = None, {}
    for st in stages[1:]:
        y = st.run(*batch)[0].astype(np.float64)
        if np.isfinite(y).all():
            d = np.abs(y - r)
            m_abs, m_ratio = float(d.max(initial=0.0)), float((d / (st.atol + st.rtol * np.abs(r))).max(initial=0.0))
        else:
            m_abs = m_ratio = float("inf")
        errors[st.name] = {"max_abs": m_abs, "ratio": m_ratio}
        if first is None and m_ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
