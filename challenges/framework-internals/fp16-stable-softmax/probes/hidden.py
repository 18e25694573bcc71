"""Hidden probes for fp16-stable-softmax: they make the score.

Every probe builds its inputs from fixed seeds, calls the candidate's
``softmax`` / ``log_softmax`` while watching the torch calls they make, and
returns the inputs with the outputs. The check (``within_softmax_bound`` in
checks.py, run in the trusted worker) computes the float64 truth from the
reference run's inputs and applies the per-element bound from the statement.
"""

from __future__ import annotations

from typing import Any

import torch
from probe_common import BF16, F16, F32, Case, both, randn, run_cases
from probekit import probe

# ---------------------------------------------------------------- softmax


@probe(category="softmax", weight=2, check="within_softmax_bound", hints=["float32-math"])
def softmax_float16_vocabulary(solution: Any) -> dict[str, Any]:
    """softmax over float16 rows of 32,000 logits (a language model's vocabulary)."""
    x = randn(4, 32_000, scale=3.0, dtype=F16, seed=1)
    return run_cases(solution, [("float16 (4, 32000), randn*3, dim=-1", "softmax", x, -1)])


@probe(category="softmax", weight=2, check="within_softmax_bound", hints=["float32-math"])
def softmax_bfloat16_rows(solution: Any) -> dict[str, Any]:
    """softmax over bfloat16 rows of 1,000 logits, two temperatures."""
    return run_cases(
        solution,
        [
            ("bfloat16 (64, 1000), randn*3, dim=-1", "softmax", randn(64, 1000, scale=3.0, dtype=BF16, seed=2), -1),
            ("bfloat16 (32, 1000), randn*0.3, dim=-1", "softmax", randn(32, 1000, scale=0.3, dtype=BF16, seed=3), -1),
        ],
    )


@probe(category="softmax", check="within_softmax_bound", hints=["float32-math", "max-subtraction"])
def softmax_float32_sharp(solution: Any) -> dict[str, Any]:
    """softmax over float32 rows with logits spread over about +-40."""
    x = randn(64, 1000, scale=10.0, dtype=F32, seed=4)
    return run_cases(solution, [("float32 (64, 1000), randn*10, dim=-1", "softmax", x, -1)])


# ---------------------------------------------------------------- log-softmax


@probe(category="log-softmax", weight=2, check="within_softmax_bound", hints=["log-softmax-direct", "float32-math"])
def log_softmax_float16_wide_spread(solution: Any) -> dict[str, Any]:
    """log_softmax over float16 rows whose logits span about 70: many probabilities underflow float16."""
    x = randn(64, 1000, scale=10.0, dtype=F16, seed=5)
    return run_cases(solution, [("float16 (64, 1000), randn*10, dim=-1", "log_softmax", x, -1)])


@probe(category="log-softmax", weight=2, check="within_softmax_bound", hints=["log-softmax-direct", "float32-math"])
def log_softmax_bfloat16_wide_spread(solution: Any) -> dict[str, Any]:
    """log_softmax over bfloat16 rows whose logits span about 70 and about 700."""
    return run_cases(
        solution,
        [
            ("bfloat16 (64, 1000), randn*10, dim=-1", "log_softmax", randn(64, 1000, scale=10.0, dtype=BF16, seed=6), -1),
            ("bfloat16 (16, 512), randn*100, dim=-1", "log_softmax", randn(16, 512, scale=100.0, dtype=BF16, seed=7), -1),
        ],
    )


@probe(category="log-softmax", check="within_softmax_bound", hints=["log-softmax-direct"])
def log_softmax_float32_very_wide(solution: Any) -> dict[str, Any]:
    """log_softmax over float32 rows whose logits span about 700: probabilities below 1e-45 underflow even float32."""
    x = randn(16, 256, scale=100.0, dtype=F32, seed=8)
    return run_cases(solution, [("float32 (16, 256), randn*100, dim=-1", "log_softmax", x, -1)])


@probe(category="log-softmax", weight=2, check="within_softmax_bound", hints=["log-near-zero", "float32-math"])
def log_softmax_dominant_logit(solution: Any) -> dict[str, Any]:
    """Logits near 1,000, one per row leading by 8 to 14: its log-probability is a tiny negative number that must keep its digits."""
    cases: list[Case] = []
    for dtype, seed in ((F16, 9), (BF16, 10), (F32, 11)):
        x = randn(32, 256, scale=1.0, dtype=torch.float64, seed=seed)
        lead = torch.linspace(8.0, 14.0, 32, dtype=torch.float64)
        x[:, 0] = x.amax(-1) + lead  # the top logit is 8..14 above the rest
        x = (x + 1000.0).to(dtype)
        name = f"{str(dtype).removeprefix('torch.')} (32, 256), 1000 + randn, top logit leads by 8..14, dim=-1"
        cases.append((name, "log_softmax", x, -1))
    return run_cases(solution, cases)


# ---------------------------------------------------------------- large logits


@probe(category="large-logits", weight=2, check="within_softmax_bound", hints=["max-subtraction"])
def float16_large_magnitude(solution: Any) -> dict[str, Any]:
    """float16 logits of magnitude up to 30,000: exp overflows long before."""
    x = randn(16, 256, scale=1e4, dtype=torch.float64, seed=12).clamp(-3e4, 3e4).to(F16)
    return run_cases(solution, both("float16 (16, 256), randn*1e4 clipped to +-3e4, dim=-1", x))


@probe(category="large-logits", check="within_softmax_bound", hints=["max-subtraction"])
def bfloat16_near_its_range(solution: Any) -> dict[str, Any]:
    """bfloat16 logits of magnitude up to 1e38, near the top of bfloat16's range."""
    x = randn(8, 128, scale=3e37, dtype=torch.float64, seed=13).clamp(-1e38, 1e38).to(BF16)
    return run_cases(solution, both("bfloat16 (8, 128), randn*3e37 clipped to +-1e38, dim=-1", x))


@probe(category="large-logits", weight=2, check="within_softmax_bound", hints=["max-subtraction", "log-near-zero"])
def large_offset_small_spread(solution: Any) -> dict[str, Any]:
    """Logits around 10,000 (float32) and 20,000 (float16) with a small spread: only the differences matter."""
    x32 = randn(16, 512, scale=2.0, offset=1e4, dtype=F32, seed=14)
    x16 = randn(16, 256, scale=64.0, offset=2e4, dtype=F16, seed=15)
    return run_cases(
        solution,
        both("float32 (16, 512), 1e4 + randn*2, dim=-1", x32) + both("float16 (16, 256), 2e4 + randn*64, dim=-1", x16),
    )


# ---------------------------------------------------------------- layout


@probe(category="layout", check="within_softmax_bound", hints=["dims-and-layout"])
def other_dims_and_strides(solution: Any) -> dict[str, Any]:
    """Reductions over a middle dim, dim 0, a negative dim, a transposed input, and the default dim when none is passed."""
    x3 = randn(6, 50, 7, scale=4.0, dtype=F16, seed=16)
    x2 = randn(300, 20, scale=4.0, dtype=BF16, seed=17)
    xt = randn(40, 24, scale=6.0, dtype=F32, seed=18).t()
    return run_cases(
        solution,
        both("float16 (6, 50, 7), dim=1", x3, 1)
        + both("bfloat16 (300, 20), dim=0", x2, 0)
        + both("float16 (6, 50, 7), dim=-3", x3, -3)
        + both("float32 (24, 40) transposed view, dim=-1", xt, -1)
        + both("float16 (6, 50, 7), no dim given (the default, -1)", x3, None),
    )


@probe(category="layout", weight=2, check="within_softmax_bound", hints=["masked-entries"])
def masked_attention_rows(solution: Any) -> dict[str, Any]:
    """Attention scores with -inf masks (causal and padding): masked entries get 0 and -inf."""
    causal = torch.ones(32, 32, dtype=torch.bool).triu(1)
    scores16 = randn(4, 32, 32, scale=4.0, dtype=F16, seed=19).masked_fill(causal, float("-inf"))
    pad = torch.arange(48)[None, :] >= torch.tensor([48, 40, 17, 1, 30, 48])[:, None]
    scores_bf = randn(6, 48, scale=8.0, dtype=BF16, seed=20).masked_fill(pad, float("-inf"))
    return run_cases(
        solution,
        both("float16 (4, 32, 32) causal mask, dim=-1", scores16) + both("bfloat16 (6, 48) padding mask, dim=-1", scores_bf),
    )


@probe(category="layout", check="within_softmax_bound", hints=["dims-and-layout"])
def degenerate_shapes(solution: Any) -> dict[str, Any]:
    """A single element along dim, a 1-D vector, an empty batch, a size-1 middle dim."""
    return run_cases(
        solution,
        both("float16 (5, 1), dim=-1", randn(5, 1, scale=100.0, dtype=F16, seed=21))
        + both("bfloat16 (100,) vector, dim=0", randn(100, scale=5.0, dtype=BF16, seed=22), 0)
        + both("float32 (0, 5), dim=-1", torch.empty(0, 5))
        + both("float16 (3, 1, 4), dim=1", randn(3, 1, 4, dtype=F16, seed=23), 1),
    )
