"""Red team round 2: each stage output is cast to the reference's dtype (float32) before the
float64 comparison ("compare like with like"): a float64 stage output loses every
bit below float32 precision, so errors smaller than float32 can resolve vanish."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference, rest = stages[0], stages[1:]
    raw = [list(reference.run(*batch)) for batch in inputs]
    want = [[np.asarray(o, dtype=np.float64) for o in outs] for outs in raw]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected, ref_raw in zip(inputs, want, raw, strict=False):
            for g, r, rr in zip(stage.run(*batch), expected, ref_raw, strict=False):
                g = np.asarray(g).astype(np.asarray(rr).dtype).astype(np.float64)
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
