"""Measures each stage against the stage before it, not against eager.

"The stage whose output changes is the culprit": the first stage is often
right, because a drift first shows as a jump from the previous stage. But
the errors it reports are the jumps, not the distance from the truth, so
every report is wrong downstream of a drift; and once a stage is NaN, the
next NaN stage compares NaN with NaN.
"""

from __future__ import annotations

import numpy as np


def find_drifting_stage(stages, inputs):
    prev = [[o.astype(np.float64) for o in stages[0].run(*b)] for b in inputs]
    first, errors = None, {}
    for st in stages[1:]:
        outs = [[o.astype(np.float64) for o in st.run(*b)] for b in inputs]
        m_abs = m_ratio = 0.0
        for got, want in zip(outs, prev, strict=False):
            for y, r in zip(got, want, strict=False):
                d = np.abs(y - r)
                d = np.where(np.isnan(y) & np.isnan(r), 0.0, d)
                d = np.where(np.isfinite(d), d, np.inf)
                m_abs = max(m_abs, float(d.max(initial=0.0)))
                m_ratio = max(m_ratio, float((d / (st.atol + st.rtol * np.abs(np.nan_to_num(r)))).max(initial=0.0)))
        errors[st.name] = {"max_abs": m_abs, "ratio": m_ratio}
        if first is None and m_ratio > 1:
            first = st.name
        prev = outs
    return {"first": first, "errors": errors}
