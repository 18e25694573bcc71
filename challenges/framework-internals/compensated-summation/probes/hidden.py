"""Hidden probes for compensated-summation: they make the score.

Every probe builds its inputs from a fixed seed with NumPy, calls the
candidate's ``total`` on each while watching the torch calls it makes, and
returns the inputs with the results. The check (``within_sum_bound`` in
checks.py, run in the trusted worker) computes the exact sum of the
reference run's inputs with ``math.fsum`` and compares each result with it
under the bound stated in the statement.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from probe_common import as_torch, cancelling_pairs, rng, run_cases
from probekit import probe

# ---------------------------------------------------------------- accumulation


@probe(category="accumulation", weight=2, check="within_sum_bound", hints=["output-dtype", "accumulate-float32"], timeout=20)
def float16_all_positive(solution: Any) -> dict[str, Any]:
    """10^6 positive float16 values: the sum is far past float16's largest finite value."""
    x = as_torch(rng(1).random(1_000_000), torch.float16)
    return run_cases(solution, {"float16 uniform [0, 1), n = 1,000,000": x})


@probe(category="accumulation", check="within_sum_bound", hints=["output-dtype", "accumulate-float32"], timeout=20)
def bfloat16_all_positive(solution: Any) -> dict[str, Any]:
    """2^20 positive bfloat16 values, and 100,000 bfloat16 ones."""
    x = as_torch(rng(2).random(1 << 20) * 4.0, torch.bfloat16)
    return run_cases(
        solution,
        {"bfloat16 uniform [0, 4), n = 2**20": x, "bfloat16 ones, n = 100,000": torch.ones(100_000, dtype=torch.bfloat16)},
    )


@probe(category="accumulation", check="within_sum_bound", hints=["accumulate-float32"], timeout=20)
def float32_lognormal(solution: Any) -> dict[str, Any]:
    """777,777 positive float32 values spread over a few decades."""
    x = as_torch(rng(3).lognormal(0.0, 2.0, 777_777), torch.float32)
    return run_cases(solution, {"float32 lognormal, n = 777,777": x})


# ---------------------------------------------------------------- cancellation


@probe(category="cancellation", weight=2, check="within_sum_bound", hints=["cancellation", "compensation"], timeout=20)
def float16_cancelling_pairs(solution: Any) -> dict[str, Any]:
    """float16: 400,000 large terms that cancel in pairs, among 200,000 small ones."""
    r = rng(4)
    x = cancelling_pairs(r.uniform(1000.0, 2000.0, 400_000), r.random(200_000) * 1e-2, torch.float16, seed=40)
    return run_cases(solution, {"float16 pairs in [1000, 2000) + small, n = 1,000,000": x})


@probe(category="cancellation", weight=2, check="within_sum_bound", hints=["cancellation", "compensation"], timeout=20)
def float32_alternating_signs(solution: Any) -> dict[str, Any]:
    """float32 terms of alternating sign, then the same terms positives first: the sum is a tiny fraction of sum(|x|)."""
    r = rng(5)
    n = 1_000_000
    x = r.uniform(1.0, 2.0, n) * np.where(np.arange(n) % 2 == 0, -1.0, 1.0)
    halves = np.concatenate([x[x > 0], x[x < 0]])  # the same terms: every positive one first
    return run_cases(
        solution,
        {
            "float32 alternating in [1, 2), n = 1,000,000": as_torch(x, torch.float32),
            "float32 the same terms, positives first": as_torch(halves, torch.float32),
        },
    )


@probe(category="cancellation", check="within_sum_bound", hints=["cancellation", "compensation"], timeout=20)
def bfloat16_cancelling_pairs(solution: Any) -> dict[str, Any]:
    """bfloat16: large terms that cancel in pairs, among small ones."""
    r = rng(6)
    x = cancelling_pairs(r.uniform(1e3, 1e5, 300_000), r.random(300_000), torch.bfloat16, seed=60)
    return run_cases(solution, {"bfloat16 pairs in [1e3, 1e5) + small, n = 900,000": x})


# ---------------------------------------------------------------- dynamic range


@probe(category="dynamic-range", weight=2, check="within_sum_bound", hints=["compensation", "neumaier"], timeout=20)
def float32_rare_spikes(solution: Any) -> dict[str, Any]:
    """float32: 64 pairs of huge values (about 5e7) that cancel, hidden among 10^6 values in [0, 1)."""
    r = rng(7)
    x = cancelling_pairs(r.uniform(3e7, 6e7, 64), r.random(1_000_000 - 128), torch.float32, seed=70)
    return run_cases(solution, {"float32 spikes, n = 1,000,000": x})


@probe(category="dynamic-range", check="within_sum_bound", hints=["compensation", "neumaier"], timeout=20)
def float32_wide_exponents(solution: Any) -> dict[str, Any]:
    """float32 magnitudes from 1e-8 to 1e8 that cancel in pairs, among 500,000 values in [0, 1)."""
    r = rng(8)
    big = 10.0 ** r.uniform(-8.0, 8.0, 40_000)
    x = cancelling_pairs(big, r.random(500_000), torch.float32, seed=80)
    return run_cases(solution, {"float32 10**U(-8, 8) pairs + [0, 1), n = 580,000": x})


@probe(category="dynamic-range", weight=2, check="within_sum_bound", hints=["compensation", "neumaier"], timeout=20)
def float16_wide_exponents(solution: Any) -> dict[str, Any]:
    """float16 magnitudes from 1e-4 to 3e4, cancelling in pairs, plus a few small terms."""
    r = rng(9)
    big = 10.0 ** r.uniform(-4.0, 4.5, 400_000)
    x = cancelling_pairs(big, r.random(1_000), torch.float16, seed=90)
    return run_cases(solution, {"float16 10**U(-4, 4.5) pairs + small, n = 801,000": x})


# ---------------------------------------------------------------- edge cases


@probe(category="edge-cases", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def short_and_odd_lengths(solution: Any) -> dict[str, Any]:
    """Lengths 0, 1, 2, 3, 1023, 1025 and 65,537, in float16 and float32."""
    r = rng(10)
    inputs: dict[str, torch.Tensor] = {}
    for n in (0, 1, 2, 3, 1023, 1025, 65_537):
        values = r.uniform(0.0, 100.0, n)
        inputs[f"float16 n = {n}"] = as_torch(values, torch.float16)
        inputs[f"float32 n = {n}"] = as_torch(values * 1e3 + 1.0, torch.float32)
    return run_cases(solution, inputs)


@probe(category="edge-cases", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def strided_views(solution: Any) -> dict[str, Any]:
    """Non-contiguous 1-D views: every third float32 element, every other bfloat16 one."""
    r = rng(11)
    base32 = as_torch(r.uniform(0.0, 1e4, 900_000), torch.float32)
    base16 = as_torch(r.uniform(0.0, 100.0, 200_001), torch.bfloat16)
    return run_cases(solution, {"float32 x[::3], n = 300,000": base32[::3], "bfloat16 x[1::2], n = 100,000": base16[1::2]})


@probe(category="edge-cases", check="within_sum_bound", hints=["output-dtype", "accumulate-float32"], timeout=20)
def float16_extremes(solution: Any) -> dict[str, Any]:
    """float16 values at the top of the range (65504) and in the subnormal range."""
    r = rng(12)
    top = np.full(100_000, 65504.0) * np.where(r.random(100_000) < 0.7, 1.0, -1.0)
    tiny = r.integers(1, 1024, 100_000) * 2.0**-24  # float16 subnormals
    return run_cases(
        solution,
        {
            "float16 +-65504, n = 100,000": as_torch(top, torch.float16),
            "float16 subnormals, n = 100,000": as_torch(tiny, torch.float16),
        },
    )
