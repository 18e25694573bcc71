"""Torch float64 copies, and the verdict from the element test itself (red team round 1; wrong since round 2).

torch.tensor(np.asarray(a)) refuses a NumPy array with negative strides (a
reversed view such as a[::-1]), which the statement allows: accepted in
round 1, it raises on outputs_in_any_memory_layout since round 2.

A stage is out when some |y - r| > atol + rtol * |r|, the negation of
numpy.isclose's test, rather than through the ratio; torch.tensor copies,
so the stages' arrays are never written.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def _t(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def find_drifting_stage(stages, inputs):
    ref_runs = [[_t(o) for o in stages[0].run(*b)] for b in inputs]
    errors = {}
    first = None
    for st in stages[1:]:
        max_abs, ratio, out = 0.0, 0.0, False
        for b, refs in zip(inputs, ref_runs, strict=True):
            ys = st.run(*b)
            if len(ys) != len(refs):
                raise ValueError("a stage returned a different number of outputs")
            for y, r in zip(ys, refs, strict=True):
                y = _t(y)
                if not bool(torch.isfinite(y).all()):
                    max_abs = ratio = math.inf
                    out = True
                    continue
                if y.numel() == 0:
                    continue
                d = (y - r).abs()
                tol = st.atol + st.rtol * r.abs()
                max_abs = max(max_abs, d.max().item())
                ratio = max(ratio, (d / tol).max().item())
                out = out or bool((d > tol).any())
        errors[st.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and out:
            first = st.name
    return {"first": first, "errors": errors}
