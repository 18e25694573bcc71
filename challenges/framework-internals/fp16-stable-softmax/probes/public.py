"""Public probes for fp16-stable-softmax: shown on "Run", inputs and all.

Each probe calls your ``softmax`` / ``log_softmax`` on a few small inputs
while watching the torch calls they make (softmax, log_softmax and logsumexp
in any form, float64 tensors and values pulled out of torch are against the
rules), and returns the inputs with your outputs. The check computes the
float64 truth and applies the per-element bound from the statement.
"""

from __future__ import annotations

from typing import Any

import torch
from probe_common import BF16, F16, F32, both, randn, run_cases
from probekit import probe

# ---------------------------------------------------------------- probes


@probe(category="softmax", check="within_softmax_bound", hints=["float32-math", "max-subtraction"])
def softmax_float16_small(solution: Any) -> dict[str, Any]:
    """softmax of float16 (4, 16) logits with a spread of about +-9."""
    x = randn(4, 16, scale=3.0, dtype=F16, seed=101)
    return run_cases(solution, [("float16 (4, 16), randn*3, dim=-1", "softmax", x, -1)])


@probe(category="log-softmax", check="within_softmax_bound", hints=["log-softmax-direct", "float32-math"])
def log_softmax_bfloat16_spread(solution: Any) -> dict[str, Any]:
    """log_softmax of bfloat16 (4, 32) logits spanning about 80: some probabilities are below 1e-30."""
    x = randn(4, 32, scale=12.0, dtype=BF16, seed=102)
    return run_cases(solution, [("bfloat16 (4, 32), randn*12, dim=-1", "log_softmax", x, -1)])


@probe(category="large-logits", check="within_softmax_bound", hints=["max-subtraction"])
def float16_large_logits(solution: Any) -> dict[str, Any]:
    """float16 logits in the thousands: [[1000, 999, 990, -1000], [20000, 20008, 19992, 20000]]."""
    x = torch.tensor([[1000.0, 999.0, 990.0, -1000.0], [20000.0, 20008.0, 19992.0, 20000.0]], dtype=F16)
    return run_cases(solution, both("float16 (2, 4), dim=-1", x))


@probe(category="layout", check="within_softmax_bound", hints=["masked-entries", "dims-and-layout"])
def masked_and_dim0(solution: Any) -> dict[str, Any]:
    """A float16 row with -inf (masked) entries, and a float32 softmax over dim 0, passed by keyword."""
    masked = torch.tensor([[2.0, float("-inf"), 0.5, float("-inf")], [float("-inf"), 3.0, 3.0, -1.0]], dtype=F16)
    cols = randn(5, 3, scale=2.0, dtype=F32, seed=103)
    return run_cases(solution, both("float16 (2, 4) with -inf, dim=-1", masked) + both("float32 (5, 3), dim=0 by keyword", cols, 0, keyword=True))
