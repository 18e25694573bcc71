"""A stage is out of tolerance only when its ratio exceeds 1 + 1e-9 (red team round 1).

The slack is meant "to absorb float rounding", but the statement's ratio is
computed in float64 and compared with 1 itself: a stage whose worst element
is a few float64 rounding units past its tolerance (a ratio of 1 + 4e-16)
is out, and this verdict calls it within. Everything else is the reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def _errors(got: Sequence[Any], want: Sequence[np.ndarray], rtol: float, atol: float) -> tuple[float, float]:
    max_abs = ratio = 0.0
    if len(got) != len(want):
        raise ValueError(f"a stage returned {len(got)} outputs, the reference {len(want)}")
    for g, r in zip(got, want, strict=True):
        g = np.asarray(g, dtype=np.float64)
        diff = np.abs(g - r)
        if not np.all(np.isfinite(g)):
            return math.inf, math.inf
        max_abs = max(max_abs, float(diff.max(initial=0.0)))
        ratio = max(ratio, float((diff / (atol + rtol * np.abs(r))).max(initial=0.0)))
    return max_abs, ratio


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference, rest = stages[0], stages[1:]
    want = [[np.asarray(o, dtype=np.float64) for o in reference.run(*batch)] for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=True):
            a, q = _errors(stage.run(*batch), expected, stage.rtol, stage.atol)
            max_abs, ratio = max(max_abs, a), max(ratio, q)
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0 + 1e-9:
            first = stage.name
    return {"first": first, "errors": errors}
