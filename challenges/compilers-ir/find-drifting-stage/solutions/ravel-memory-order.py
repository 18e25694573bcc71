"""Red team round 2: outputs are flattened with ravel(order="K") ("no copy") before comparing, which
follows each array's memory order: a stage returning a Fortran-ordered or transposed
(non C-contiguous) array gets its elements paired with the wrong reference elements."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    reference, rest = stages[0], stages[1:]
    want = [[np.asarray(o).ravel(order="K").astype(np.float64) for o in reference.run(*batch)] for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=False):
            for g, r in zip(stage.run(*batch), expected, strict=False):
                g = np.asarray(g).ravel(order="K").astype(np.float64)
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
