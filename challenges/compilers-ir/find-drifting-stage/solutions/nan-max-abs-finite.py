"""Red team round 2: a non-finite output makes only the ratio infinite; max_abs is taken with
np.nanmax over the elements (NaN skipped), so a stage whose output has NaN reports a
finite max_abs instead of inf as the statement requires for both numbers."""

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
                g = np.asarray(g, dtype=np.float64)
                diff = np.abs(g - r)
                if diff.size and not np.all(np.isnan(diff)):
                    max_abs = max(max_abs, float(np.nanmax(diff)))
                if not np.all(np.isfinite(g)):
                    ratio = math.inf
                    continue
                ratio = max(ratio, float((diff / (stage.atol + stage.rtol * np.abs(r))).max(initial=0.0)))
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
