"""One tolerance for the whole pipeline: the strictest one any stage declares.

Everything else is right (every batch, every output, NaN as infinite,
errors against the first stage). But the fp16 stage is held to the float32
stages' 1e-5: its ordinary rounding (about 1e-4 relative) now reads as
drift, so a healthy pipeline is blamed on fp16, and so is any pipeline whose
real drift fp16 hides within its own tolerance.
"""

from __future__ import annotations

import numpy as np


def find_drifting_stage(stages, inputs):
    rtol = min(s.rtol for s in stages[1:])
    atol = min(s.atol for s in stages[1:])
    ref = [[o.astype(np.float64) for o in stages[0].run(*b)] for b in inputs]
    first, errors = None, {}
    for st in stages[1:]:
        m_abs = m_ratio = 0.0
        for b, want in zip(inputs, ref, strict=False):
            for y, r in zip(st.run(*b), want, strict=False):
                y = y.astype(np.float64)
                if not np.isfinite(y).all():
                    m_abs = m_ratio = float("inf")
                    continue
                d = np.abs(y - r)
                m_abs = max(m_abs, float(d.max(initial=0.0)))
                m_ratio = max(m_ratio, float((d / (atol + rtol * np.abs(r))).max(initial=0.0)))
        errors[st.name] = {"max_abs": m_abs, "ratio": m_ratio}
        if first is None and m_ratio > 1:
            first = st.name
    return {"first": first, "errors": errors}
