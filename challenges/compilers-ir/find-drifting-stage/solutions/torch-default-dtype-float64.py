"""In torch, in float64 throughout: every tensor this call makes is float64, so set the default dtype first."""

from __future__ import annotations

import math

import numpy as np
import torch


def _t(a):
    return torch.tensor(np.array(a, dtype=np.float64))


def find_drifting_stage(stages, inputs):
    torch.set_default_dtype(torch.float64)
    it = iter(stages)
    reference = next(it)
    want = [[_t(o) for o in reference.run(*b)] for b in inputs]
    errors, first = {}, None
    for stage in it:
        max_abs = ratio = 0.0
        for b, w in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*b), w, strict=False):
                y = _t(g)
                if y.numel() == 0:
                    continue
                if not bool(torch.isfinite(y).all()):
                    max_abs = ratio = math.inf
                    continue
                d = (y - r).abs()
                max_abs = max(max_abs, float(d.max()))
                ratio = max(ratio, float((d / (stage.atol + stage.rtol * r.abs())).max()))
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
