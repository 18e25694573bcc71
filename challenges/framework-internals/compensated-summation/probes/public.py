"""Public probes for compensated-summation: shown on "Run", inputs and all.

Each probe calls your ``total`` on a few inputs while watching the torch
calls it makes (float64 tensors, values pulled out of torch and the ops that
accumulate in float64 inside are against the rules), and returns the inputs
with your results. The check computes the exact sum of each input with
``math.fsum`` and applies the bound from the statement.
"""

from __future__ import annotations

from typing import Any

import torch
from probe_common import as_torch, cancelling_pairs, rng, run_cases
from probekit import probe

# ---------------------------------------------------------------- probes


@probe(category="accumulation", check="within_sum_bound", hints=["output-dtype", "accumulate-float32"])
def float16_past_its_range(solution: Any) -> dict[str, Any]:
    """100,000 float16 values in [0, 2): their sum, about 1e5, does not fit in float16."""
    x = as_torch(rng(101).random(100_000) * 2.0, torch.float16)
    return run_cases(solution, {"float16 uniform [0, 2), n = 100,000": x})


@probe(category="cancellation", check="within_sum_bound", hints=["cancellation", "compensation", "neumaier"])
def small_cancelling_vectors(solution: Any) -> dict[str, Any]:
    """Short vectors whose large terms cancel: the small ones are the whole answer."""
    inputs = {
        "float32 [1, 1e8, 1, -1e8]": torch.tensor([1.0, 1e8, 1.0, -1e8]),
        "float32 [1e8, 1, -1e8, 1, 3e-5]": torch.tensor([1e8, 1.0, -1e8, 1.0, 3e-5]),
        "float16 [60000, 0.5, -60000, 0.25]": torch.tensor([60000.0, 0.5, -60000.0, 0.25], dtype=torch.float16),
        "bfloat16 [8e37, 1, -8e37, 2]": torch.tensor([8e37, 1.0, -8e37, 2.0], dtype=torch.bfloat16),
    }
    return run_cases(solution, inputs)


@probe(category="dynamic-range", check="within_sum_bound", hints=["compensation", "neumaier"], timeout=20)
def float32_spikes(solution: Any) -> dict[str, Any]:
    """50,000 float32 values in [0, 1) with 8 pairs of values near 1e7 that cancel."""
    r = rng(102)
    x = cancelling_pairs(r.uniform(1e7, 2e7, 8), r.random(50_000 - 16), torch.float32, seed=103)
    return run_cases(solution, {"float32 spikes, n = 50,000": x})
