"""Public probes for layernorm-cancellation: shown on "Run", inputs and all.

Each probe calls your ``layer_norm`` on a few small inputs while watching the
torch calls it makes (var/std and normalisation layers, float64 tensors and
values pulled out of torch are against the rules), and returns the inputs
with your three outputs. The check computes the float64 truth and applies the
bounds from the statement.
"""

from __future__ import annotations

from typing import Any

from probe_common import BF16, F16, F32, case, randn, run_cases
from probekit import probe

# ---------------------------------------------------------------- probes


@probe(category="basics", check="within_layer_norm_bound", hints=["float32-stats", "population-variance"])
def float32_small_rows(solution: Any) -> dict[str, Any]:
    """float32 (4, 16) rows with mean 0.5: y, mean and rstd."""
    return run_cases(solution, [case("float32 (4, 16), 0.5 + randn", randn(4, 16, offset=0.5, dtype=F32, seed=201), 301)])


@probe(category="cancellation", check="within_layer_norm_bound", hints=["cancellation", "two-pass"])
def float32_mean_ten_thousand(solution: Any) -> dict[str, Any]:
    """float32 (2, 256) rows with mean 1e4 and standard deviation 1."""
    return run_cases(solution, [case("float32 (2, 256), 1e4 + randn", randn(2, 256, offset=1e4, dtype=F32, seed=202), 303)])


@probe(category="half-precision", check="within_layer_norm_bound", hints=["stats-dtype", "float32-stats"])
def float16_large_values(solution: Any) -> dict[str, Any]:
    """float16 (2, 64) activations of magnitude up to ~1000: x*x overflows float16."""
    return run_cases(solution, [case("float16 (2, 64), 300*randn", randn(2, 64, scale=300.0, dtype=F16, seed=203), 305)])


@probe(category="layout", check="within_layer_norm_bound", hints=["shapes"])
def one_and_three_dims(solution: Any) -> dict[str, Any]:
    """A bfloat16 vector (0-d mean and rstd) and a float32 (2, 2, 8) tensor."""
    return run_cases(
        solution,
        [
            case("bfloat16 (32,)", randn(32, scale=2.0, offset=1.0, dtype=BF16, seed=204), 307),
            case("float32 (2, 2, 8)", randn(2, 2, 8, dtype=F32, seed=205), 309),
        ],
    )
