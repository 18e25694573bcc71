"""Red team round 2: stages are unpacked as tuples, `for name, run, rtol, atol in stages`, copying
given/pipeline.py's Stage NamedTuple field order; the statement only promises objects
with .name, .run, .rtol and .atol attributes, so any other stage object raises."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    (_, ref_run, _, _), rest = stages[0], stages[1:]
    want = [[np.asarray(o, dtype=np.float64) for o in ref_run(*batch)] for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for name, run, rtol, atol in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(run(*batch), expected, strict=False):
                g = np.asarray(g, dtype=np.float64)
                if not np.all(np.isfinite(g)):
                    max_abs = ratio = math.inf
                    continue
                diff = np.abs(g - r)
                max_abs = max(max_abs, float(diff.max(initial=0.0)))
                ratio = max(ratio, float((diff / (atol + rtol * np.abs(r))).max(initial=0.0)))
        errors[name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = name
    return {"first": first, "errors": errors}
