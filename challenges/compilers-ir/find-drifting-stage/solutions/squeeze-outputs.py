"""Red team round 2: the stage's outputs are np.squeeze()d ("ORT may add a batch dim of 1") before
being subtracted from the unsqueezed reference; with a size-1 dimension that is not
leading, e.g. shape (3, 1), the squeezed (3,) broadcasts against (3, 1) to (3, 3) and
every stage element is compared with every reference element."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference, rest = stages[0], stages[1:]
    want = [[np.asarray(o, dtype=np.float64) for o in reference.run(*batch)] for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*batch), expected, strict=False):
                g = np.squeeze(np.asarray(g, dtype=np.float64))
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
