"""Correct, written differently (red team round 2): every stage's outputs over all batches are flattened (C order)
into one float64 vector, matched against the reference's vector built the same way;
the verdict is numpy.isclose in float64 (the statement's |y - r| <= atol + rtol*|r|),
the numbers are the maxima of |y - r| and |y - r| / (atol + rtol*|r|)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def _flat(outs: Sequence[Any]) -> np.ndarray:
    parts = [np.array(o, dtype=np.float64, copy=True).reshape(-1) for o in outs]
    return np.concatenate(parts) if parts else np.zeros(0)


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    stages = list(stages)
    ref = np.concatenate([_flat(stages[0].run(*b)) for b in inputs])
    errors: dict[str, dict[str, float]] = {}
    first = None
    for st in stages[1:]:
        y = np.concatenate([_flat(st.run(*b)) for b in inputs])
        if y.shape != ref.shape:
            raise ValueError("stage and reference disagree on the number of elements")
        if not np.isfinite(y).all():
            errors[st.name] = {"max_abs": math.inf, "ratio": math.inf}
            out = True
        else:
            d = np.abs(y - ref)
            t = float(st.atol) + float(st.rtol) * np.abs(ref)
            errors[st.name] = {"max_abs": float(d.max(initial=0.0)), "ratio": float((d / t).max(initial=0.0))}
            out = not bool(np.isclose(y, ref, rtol=float(st.rtol), atol=float(st.atol)).all())
        if first is None and out:
            first = st.name
    return {"first": first, "errors": errors}
