"""Find the first stage of a lowering pipeline whose output drifts.

Write ``find_drifting_stage(stages, inputs)``: run every stage on every input
batch, measure each stage against the first one (eager PyTorch) at that
stage's own tolerance, and return the first stage out of tolerance with
every stage's errors. The statement defines the report exactly.

The pipeline the probes build is the read-only module given/pipeline.py (its
tab is beside this file). Import it to build a pipeline, plant a drift in it
and try your function locally:

    import numpy as np, torch
    from torch import nn
    from given.pipeline import build_pipeline

    model = nn.Sequential(nn.LayerNorm(32), nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
    inputs = [(np.random.default_rng(i).normal(size=(4, 8, 32)).astype(np.float32),) for i in range(2)]
    tanh_gelu = lambda x, approximate="none": 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x**3)))
    stages = build_pipeline(model, inputs[0], decompositions={torch.ops.aten.gelu.default: tanh_gelu})
    print(find_drifting_stage(stages, inputs))        # first should be "fx"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    """First draft: a drift is where the output jumps from the stage before."""
    batch = inputs[0]
    previous = stages[0].run(*batch)[0]
    errors: dict[str, dict[str, float]] = {}
    first = None
    for stage in stages[1:]:
        out = stage.run(*batch)[0]
        max_abs = float(np.abs(out - previous).max())
        ratio = max_abs / (stage.atol + stage.rtol * float(np.abs(previous).max()))
        errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
        if first is None and ratio > 1:
            first = stage.name
        previous = out
    return {"first": first, "errors": errors}
