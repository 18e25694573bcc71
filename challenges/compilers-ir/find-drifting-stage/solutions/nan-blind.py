"""Right in every way except NaN.

max(|y - r|) over an array with a NaN in it is NaN, and NaN > 1 is False:
a stage whose outputs overflowed to NaN passes as "within tolerance", and
its errors come back as NaN instead of infinity.
"""

from __future__ import annotations

import numpy as np


def find_drifting_stage(stages, inputs):
    ref = [[o.astype(np.float64) for o in stages[0].run(*b)] for b in inputs]
    first, errors = None, {}
    for st in stages[1:]:
        m_abs = m_ratio = 0.0
        for b, want in zip(inputs, ref, strict=False):
            for y, r in zip(st.run(*b), want, strict=False):
                d = np.abs(y.astype(np.float64) - r)
                m_abs = np.maximum(m_abs, d.max(initial=0.0))
                m_ratio = np.maximum(m_ratio, (d / (st.atol + st.rtol * np.abs(r))).max(initial=0.0))
        errors[st.name] = {"max_abs": float(m_abs), "ratio": float(m_ratio)}
        if first is None and m_ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
