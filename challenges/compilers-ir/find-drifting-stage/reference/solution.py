"""Reference: measure every stage against the first one, each at its own tolerance.

For each stage after the reference, over every input batch, every output and
every element, in float64:

    max_abs = max |y - r|
    ratio   = max |y - r| / (atol + rtol * |r|)      (the stage's own atol and rtol)

where r is the reference stage's output. A non-finite y (NaN or inf) counts
as an infinite error. The first stage, in pipeline order, whose ratio exceeds
1 is the first to drift. Every stage is measured, because tolerances differ
from stage to stage: a later stage can be back within its (looser) tolerance
after an earlier one has drifted, so no stage's verdict says anything about
the stages before or after it.
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
    # Iterate, do not slice: a sequence need not take slices (a collections.deque does not).
    reference, *rest = stages
    want = [[np.asarray(o, dtype=np.float64) for o in reference.run(*batch)] for batch in inputs]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in rest:
        max_abs = ratio = 0.0
        for batch, expected in zip(inputs, want, strict=True):
            a, q = _errors(stage.run(*batch), expected, stage.rtol, stage.atol)
            max_abs, ratio = max(max_abs, a), max(ratio, q)
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1.0:
            first = stage.name
    return {"first": first, "errors": errors}
