"""Hidden probes for layernorm-cancellation: they make the score.

Every probe builds its inputs from fixed seeds, calls the candidate's
``layer_norm`` while watching the torch calls it makes, and returns the
inputs with the three outputs. The check (``within_layer_norm_bound_hidden``
in checks.py, run in the trusted worker) computes the float64 truth from the
reference run's inputs and applies the bounds from the statement; its
messages name the case, the output, the worst element's position and its
error relative to the bound, never a value.
"""

from __future__ import annotations

from typing import Any

import torch
from probe_common import BF16, F16, F32, case, randn, run_cases
from probekit import probe

# ---------------------------------------------------------------- basics


@probe(category="basics", check="within_layer_norm_bound_hidden", hints=["float32-stats", "population-variance"])
def float32_rows(solution: Any) -> dict[str, Any]:
    """float32 (32, 768) activations with mean 0.5 and spread 2: all three outputs."""
    return run_cases(solution, [case("float32 (32, 768), 0.5 + 2*randn", randn(32, 768, scale=2.0, offset=0.5, dtype=F32, seed=1), 100)])


@probe(category="basics", check="within_layer_norm_bound_hidden", hints=["float32-stats", "population-variance"])
def bfloat16_rows(solution: Any) -> dict[str, Any]:
    """bfloat16 (16, 1024) activations with mean 0: y in bfloat16, mean and rstd in float32."""
    return run_cases(solution, [case("bfloat16 (16, 1024), randn", randn(16, 1024, dtype=BF16, seed=2), 102)])


@probe(category="basics", check="within_layer_norm_bound_hidden", hints=["float32-stats", "eps-placement", "population-variance"])
def float16_rows_and_eps(solution: Any) -> dict[str, Any]:
    """float16 (16, 512) activations with eps = 1e-5 and with eps = 0.1, and float32 rows with eps not passed.

    The last case calls ``layer_norm(x, weight, bias)``: the statement's
    signature defaults eps to 1e-5, and with a variance of 0.04 a default of
    1e-6 or 1e-4 puts rstd 46 or 460 times its bound away (measured).
    """
    x = randn(16, 512, scale=3.0, offset=-1.0, dtype=F16, seed=3)
    small = randn(8, 512, scale=0.2, dtype=F16, seed=4)
    default = randn(8, 256, scale=0.2, offset=0.3, dtype=F32, seed=16)
    return run_cases(
        solution,
        [
            case("float16 (16, 512), -1 + 3*randn, eps=1e-5", x, 104),
            case("float16 (8, 512), 0.2*randn, eps=0.1", small, 106, eps=0.1),
            case("float32 (8, 256), 0.3 + 0.2*randn, eps not passed", default, 136, eps=None),
        ],
    )


# ---------------------------------------------------------------- cancellation


@probe(category="cancellation", weight=2, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass"])
def float32_large_mean(solution: Any) -> dict[str, Any]:
    """float32 (16, 1024) rows with mean 1e4 and standard deviation 1."""
    return run_cases(solution, [case("float32 (16, 1024), 1e4 + randn", randn(16, 1024, offset=1e4, dtype=F32, seed=5), 108)])


@probe(category="cancellation", weight=2, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass"])
def float32_tiny_spread(solution: Any) -> dict[str, Any]:
    """float32 (8, 4096) rows with mean -3000 and standard deviation 0.05."""
    x = randn(8, 4096, scale=0.05, offset=-3e3, dtype=F32, seed=6)
    return run_cases(solution, [case("float32 (8, 4096), -3000 + 0.05*randn", x, 110)])


@probe(category="cancellation", weight=2, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass", "stats-dtype"])
def float16_large_mean(solution: Any) -> dict[str, Any]:
    """float16 (16, 512) rows with mean 1024 and standard deviation 2 (mean/std = 512)."""
    return run_cases(solution, [case("float16 (16, 512), 1024 + 2*randn", randn(16, 512, scale=2.0, offset=1024.0, dtype=F16, seed=7), 112)])


@probe(category="cancellation", check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass", "stats-dtype"])
def bfloat16_large_mean(solution: Any) -> dict[str, Any]:
    """bfloat16 (16, 1024) rows with mean 1e4 and standard deviation 64 (bfloat16's spacing there)."""
    x = randn(16, 1024, scale=64.0, offset=1e4, dtype=BF16, seed=8)
    return run_cases(solution, [case("bfloat16 (16, 1024), 1e4 + 64*randn", x, 114)])


@probe(category="cancellation", weight=2, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass", "eps-placement"])
def constant_rows(solution: Any) -> dict[str, Any]:
    """Rows whose values are all equal (variance 0) at an offset: rstd is 1/sqrt(eps) and y is the bias."""
    return run_cases(
        solution,
        [
            case("float32 (4, 1000), all 1000.3", torch.full((4, 1000), 1000.3), 116),
            case("float16 (4, 1000), all 3000", torch.full((4, 1000), 3000.0, dtype=F16), 118),
            case("bfloat16 (4, 640), all -3e5", torch.full((4, 640), -3e5, dtype=BF16), 120),
        ],
    )


# ---------------------------------------------------------------- half precision


@probe(category="half-precision", weight=2, check="within_layer_norm_bound_hidden", hints=["stats-dtype", "float32-stats"])
def float16_squares_overflow(solution: Any) -> dict[str, Any]:
    """float16 (8, 256) activations of magnitude up to ~1000: their squares overflow float16."""
    return run_cases(solution, [case("float16 (8, 256), 300*randn", randn(8, 256, scale=300.0, dtype=F16, seed=9), 122)])


@probe(category="half-precision", check="within_layer_norm_bound_hidden", hints=["stats-dtype", "float32-stats"])
def float16_squares_underflow(solution: Any) -> dict[str, Any]:
    """float16 (8, 512) activations around 0.01: their squares are subnormal in float16."""
    x = randn(8, 512, scale=0.01, dtype=F16, seed=10)
    return run_cases(solution, [case("float16 (8, 512), 0.01*randn, eps=1e-7", x, 124, eps=1e-7)])


# ---------------------------------------------------------------- layout


@probe(category="layout", check="within_layer_norm_bound_hidden", hints=["shapes", "population-variance"])
def shapes_and_strides(solution: Any) -> dict[str, Any]:
    """A 3-D input, a 1-D input (0-d mean and rstd), a transposed view, D = 1, and no rows at all."""
    return run_cases(
        solution,
        [
            case("float32 (2, 3, 64)", randn(2, 3, 64, scale=2.0, dtype=F32, seed=11), 126),
            case("bfloat16 (128,)", randn(128, scale=4.0, offset=3.0, dtype=BF16, seed=12), 128),
            case("float32 (10, 64) transposed view", randn(64, 10, offset=0.5, dtype=F32, seed=13).t(), 130),
            case("float16 (5, 1)", randn(5, 1, scale=10.0, dtype=F16, seed=14), 132),
            case("float32 (0, 64), no rows", randn(0, 64, dtype=F32, seed=15), 134),
        ],
    )
