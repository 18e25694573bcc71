"""Red team round 2: the reference is taken off with stages.pop(0): that mutates the caller's list
(the reference stage disappears from it) and raises on any other sequence, such as a
tuple, which the statement allows ("stages is a sequence")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference = stages.pop(0)
    want = [[np.asarray(o, dtype=np.float64) for o in reference.run(*batch)] for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in stages:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*batch), expected, strict=False):
                g = np.asarray(g, dtype=np.float64)
                if not np.all(np.isfinite(g)):
                    max_abs = ratio = math.inf
                    continue
                diff = np.abs(g - r)
                max_abs = max(max_abs, float(diff.max(initial=0.0)))
                ratio = max(ratio, float((diff / (stage.atol + stage.rtol * np.abs(r))).max(initial=0.0)))
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
