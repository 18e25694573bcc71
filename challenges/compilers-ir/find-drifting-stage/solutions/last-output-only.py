"""Measures only the last output of each batch: the comparison sits one indent too far left.

Everything else is right (every stage against eager at its own tolerance,
every batch, NaN as infinite). But the measurement after the loop over a
batch's outputs sees only the loop's last ``y`` and ``r``: an indentation
slip that single-output models never show. A drift confined to any output
but the last goes unseen, and the errors of the others are never counted.
"""

from __future__ import annotations

import math

import numpy as np


def find_drifting_stage(stages, inputs):
    ref = [[np.asarray(o, np.float64) for o in stages[0].run(*b)] for b in inputs]
    first, errors = None, {}
    for st in stages[1:]:
        max_abs = ratio = 0.0
        for b, want in zip(inputs, ref, strict=True):
            for y, r in zip(st.run(*b), want, strict=True):  # noqa: B007 (r is read after the loop: the bug)
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
