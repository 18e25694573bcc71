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

import math
from collections.abc import Callable
from typing import Any

import torch
from probe_common import BF16, F16, F32, Case, case, randn, run_cases
from probekit import probe

F64 = torch.float64


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------- generators of the data real models produce


def outlier_rows(n: int, d: int, dtype: torch.dtype, seed: int, where: str) -> torch.Tensor:
    """Rows of randn with a per-row spread in [0.5, 2] and a small offset, plus one channel far from the rest.

    The far channel (a "massive activation", as LLM hidden states have) is at
    position 0 (where="first"), d - 1 ("last"), anywhere strictly between,
    drawn per row ("middle"), or at position row % d ("diagonal": with n >= d,
    every position has a row whose far channel is there); its magnitude is
    log-uniform in [100, 3000] ([1000, 3000] on the diagonal), its sign random.
    """
    g = _gen(seed)
    spread = 0.5 + 1.5 * torch.rand(n, 1, generator=g, dtype=F64)
    x = torch.randn(n, d, generator=g, dtype=F64) * spread + 0.2 * torch.randn(n, 1, generator=g, dtype=F64)
    low = 3.0 if where == "diagonal" else 2.0  # on the diagonal, 1000 .. 3000: the far channel dominates the variance
    magnitude = 10.0 ** (low + (3.5 - low) * torch.rand(n, generator=g, dtype=F64))
    sign = torch.where(torch.rand(n, generator=g, dtype=F64) < 0.5, -1.0, 1.0).to(F64)
    if where == "first":
        pos = torch.zeros(n, dtype=torch.long)
    elif where == "last":
        pos = torch.full((n,), d - 1, dtype=torch.long)
    elif where == "diagonal":
        pos = torch.arange(n) % d
    else:
        pos = torch.randint(1, d - 1, (n,), generator=g)
    x[torch.arange(n), pos] = sign * magnitude
    return x.to(dtype)


def near_constant_data(n: int, d: int, dtype: torch.dtype, seed: int, level: float, ulps: int) -> torch.Tensor:
    """Rows equal to ``level`` except one to four elements per row, one to ``ulps`` of dtype's spacing away.

    ``level`` must be exact in dtype and not next to a power of two, so that every element is exact too.
    """
    g = _gen(seed)
    mantissa_bits = {F16: 10, BF16: 7, F32: 23}[dtype]
    spacing = 2.0 ** (math.floor(math.log2(abs(level))) - mantissa_bits)
    x = torch.full((n, d), level, dtype=F64)
    for row in range(n):
        k = 1 + int(torch.randint(0, 4, (1,), generator=g))
        cols = torch.randperm(d, generator=g)[:k]
        sign = torch.where(torch.rand(k, generator=g, dtype=F64) < 0.5, -1.0, 1.0).to(F64)
        x[row, cols] += torch.randint(1, ulps + 1, (k,), generator=g).to(F64) * sign * spacing
    return x.to(dtype)


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


@probe(category="basics", check="within_layer_norm_bound_hidden", hints=["signature", "eps-placement"])
def arguments_by_keyword(solution: Any) -> dict[str, Any]:
    """The statement's parameter names: eps=, weight= and bias=, and every argument by keyword; eps by position too.

    A parameter renamed (``epsilon``, ``gamma``/``beta``, ``input``) raises
    TypeError on the keyword calls; a keyword-only eps raises on the
    positional one. The spreads are small, so eps matters to rstd.
    """
    return run_cases(
        solution,
        [
            case(
                "float32 (8, 256), 0.2*randn, eps=0.1 by keyword", randn(8, 256, scale=0.2, dtype=F32, seed=17), 138, eps=0.1, call="eps by keyword"
            ),
            case(
                "bfloat16 (4, 512), weight= and bias= by keyword, eps left out",
                randn(4, 512, scale=0.1, offset=2.0, dtype=BF16, seed=18),
                140,
                eps=None,
                call="weight and bias by keyword",
            ),
            case(
                "float16 (4, 128), weight=, bias= and eps=1e-3 by keyword",
                randn(4, 128, scale=0.05, offset=-1.0, dtype=F16, seed=19),
                142,
                eps=1e-3,
                call="weight and bias by keyword",
            ),
            case(
                "float32 (2, 3, 32), x=, weight=, bias= and eps=0.01 all by keyword",
                randn(2, 3, 32, scale=0.1, dtype=F32, seed=20),
                144,
                eps=0.01,
                call="all by keyword",
            ),
            case(
                "float16 (4, 64), x=, weight=, bias= by keyword, eps left out",
                randn(4, 64, scale=0.01, dtype=F16, seed=21),
                146,
                eps=None,
                call="all by keyword",
            ),
            case("float32 (4, 64), 0.1*randn, eps=0.01 by position", randn(4, 64, scale=0.1, dtype=F32, seed=22), 148, eps=0.01),
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


# ---------------------------------------------------------------- outliers: one channel far from the rest


def _outlier_cases(where: str, seed: int) -> list[Case]:
    """Two seeds in each dtype of rows with one channel far from the rest, at ``where``."""
    sizes = ((F32, "float32", 8, 768), (BF16, "bfloat16", 8, 4096), (F16, "float16", 8, 1024))
    return [
        case(f"{label} ({n}, {d}), one far channel ({where}), #{k}", outlier_rows(n, d, dtype, seed + 10 * i + k, where), seed + 10 * i + k + 500)
        for i, (dtype, label, n, d) in enumerate(sizes)
        for k in range(2)
    ]


@probe(category="outliers", timeout=30, check="within_layer_norm_bound_hidden", hints=["outliers", "cancellation", "two-pass"])
def outlier_in_first_channel(solution: Any) -> dict[str, Any]:
    """Rows whose first channel is far from the rest (a "massive activation"), in all three dtypes."""
    return run_cases(solution, _outlier_cases("first", 1000))


@probe(category="outliers", timeout=30, check="within_layer_norm_bound_hidden", hints=["outliers", "cancellation", "two-pass"])
def outlier_in_a_middle_channel(solution: Any) -> dict[str, Any]:
    """Rows with one channel far from the rest somewhere in the middle, in all three dtypes."""
    return run_cases(solution, _outlier_cases("middle", 2000))


@probe(category="outliers", timeout=30, check="within_layer_norm_bound_hidden", hints=["outliers", "cancellation", "two-pass"])
def outlier_in_last_channel(solution: Any) -> dict[str, Any]:
    """Rows whose last channel is far from the rest, in all three dtypes."""
    return run_cases(solution, _outlier_cases("last", 3000))


@probe(category="outliers", timeout=30, check="within_layer_norm_bound_hidden", hints=["outliers", "cancellation", "two-pass"])
def outlier_in_every_position(solution: Any) -> dict[str, Any]:
    """Rows whose far channel moves along the diagonal, three times over: every position holds one, in all three dtypes."""
    return run_cases(
        solution,
        [
            case("float32 (576, 192), far channel on the diagonal", outlier_rows(576, 192, F32, 3500, "diagonal"), 3600),
            case("bfloat16 (576, 192), far channel on the diagonal", outlier_rows(576, 192, BF16, 3501, "diagonal"), 3601),
            case("float16 (576, 192), far channel on the diagonal", outlier_rows(576, 192, F16, 3502, "diagonal"), 3602),
            case("float32 (384, 128), far channel on the diagonal, #1", outlier_rows(384, 128, F32, 3503, "diagonal"), 3603),
        ],
    )


# ---------------------------------------------------------------- near-constant rows


@probe(category="cancellation", timeout=30, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass", "eps-placement"])
def near_constant_rows(solution: Any) -> dict[str, Any]:
    """Rows that are constant but for a few elements an ulp or two away, or with a spread a millionth of the mean."""
    cases: list[Case] = []
    for k in range(2):
        cases += [
            case(
                f"float32 (8, 1024), 1000.25 but a few ulps, eps=1e-12, #{k}",
                near_constant_data(8, 1024, F32, 3100 + k, 1000.25, 3),
                3200 + k,
                eps=1e-12,
            ),
            case(
                f"float32 (8, 512), 1000.3 + 1e-3*randn, #{k}",
                randn(8, 512, scale=1e-3, offset=1000.3, dtype=F32, seed=3110 + k),
                3210 + k,
                eps=1e-10,
            ),
            case(f"float16 (8, 512), 2050 but a few ulps, #{k}", near_constant_data(8, 512, F16, 3120 + k, 2050.0, 2), 3220 + k),
            case(f"float16 (8, 256), 0.75 but a few ulps, eps=1e-10, #{k}", near_constant_data(8, 256, F16, 3130 + k, 0.75, 2), 3230 + k, eps=1e-10),
            case(f"bfloat16 (8, 1024), -299008 but an ulp, #{k}", near_constant_data(8, 1024, BF16, 3140 + k, -299008.0, 1), 3240 + k),
        ]
    return run_cases(solution, cases)


# ---------------------------------------------------------------- moderate means: 1 to 1000 standard deviations


def moderate_mean_rows(n: int, d: int, dtype: torch.dtype, seed: int, scale: float) -> torch.Tensor:
    """Rows of randn whose mean is 1 to 300 times their spread, drawn log-uniformly per row, with a random sign.

    Each row's spread is scale * [0.5, 2]. The one-pass E[x^2] - E[x]^2 goes
    over the rstd bound at a mean/spread ratio that grows with D (about 4 at
    D = 8, 10 at D = 64, 30 at D = 4096, in float32; at D = 8 a few rows in
    a hundred already do at a ratio of 3): every row is a different ratio,
    and small D gets the most rows, so a solution that keeps the one-pass
    formula below some threshold ratio fails wherever that formula breaks
    the bound (measured: thresholds of 4 and above fail in float32).
    """
    g = _gen(seed)
    kappa = 10.0 ** (2.5 * torch.rand(n, 1, generator=g, dtype=F64))
    spread = scale * (0.5 + 1.5 * torch.rand(n, 1, generator=g, dtype=F64))
    sign = torch.where(torch.rand(n, 1, generator=g, dtype=F64) < 0.5, -1.0, 1.0).to(F64)
    return (torch.randn(n, d, generator=g, dtype=F64) * spread + sign * kappa * spread).to(dtype)


def _moderate_mean_cases(dtype: torch.dtype, label: str, sizes: tuple[int, ...], scale: float, seed: int) -> list[Case]:
    cases: list[Case] = []
    for i, d in enumerate(sizes):
        n = 1536 if d <= 16 else 512 if d <= 64 else 128 if d <= 1024 else 32
        x = moderate_mean_rows(n, d, dtype, seed + i, scale)
        cases.append(case(f"{label} ({n}, {d}), mean 1 to 300 spreads, eps=1e-5 by keyword", x, seed + 100 + i, call="eps by keyword"))
    return cases


@probe(category="cancellation", weight=2, timeout=30, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass"])
def moderate_means_every_d(solution: Any) -> dict[str, Any]:
    """float32 rows whose mean is 1 to 300 times their spread, at D from 8 to 4096: no ratio is safe for E[x^2] - E[x]^2."""
    return run_cases(solution, _moderate_mean_cases(F32, "float32", (8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 4096), 1.0, 7000))


@probe(category="cancellation", timeout=30, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass", "stats-dtype"])
def moderate_means_half_precision(solution: Any) -> dict[str, Any]:
    """float16 (spread about 4, means up to 2400) and bfloat16 rows whose mean is 1 to 300 times their spread, D from 8 to 1024."""
    return run_cases(
        solution,
        _moderate_mean_cases(F16, "float16", (8, 16, 32, 64, 128, 512), 4.0, 7200)
        + _moderate_mean_cases(BF16, "bfloat16", (8, 32, 128, 1024), 1.0, 7400),
    )


# ---------------------------------------------------------------- the dtypes' limits


def _clamped(x: torch.Tensor, limit: float, dtype: torch.dtype) -> torch.Tensor:
    return x.to(F64).clamp(-limit, limit).to(dtype)


@probe(category="range", timeout=30, check="within_layer_norm_bound_hidden", hints=["stats-dtype", "float32-stats"])
def values_near_the_dtype_limits(solution: Any) -> dict[str, Any]:
    """float16 values up to its largest (65504), bfloat16 values up to 1e15 and down to 1e-30, float32 at 1e12."""
    cases: list[Case] = []
    for k in range(2):
        g = _gen(4100 + k)
        signs = torch.where(torch.rand(4, 512, generator=g, dtype=F64) < 0.5, -65504.0, 65504.0).to(F16)
        cases += [
            case(f"float16 (4, 512), +-65504, #{k}", signs, 4200 + k),
            case(f"float16 (4, 512), 2e4*randn, #{k}", _clamped(randn(4, 512, scale=2e4, dtype=F64, seed=4110 + k), 65504.0, F16), 4210 + k),
            case(
                f"float16 (4, 512), 6e4 + 64*randn, #{k}",
                _clamped(randn(4, 512, scale=64.0, offset=6e4, dtype=F64, seed=4120 + k), 65504.0, F16),
                4220 + k,
            ),
            case(
                f"bfloat16 (4, 1024), 3e14 + 1e14*randn, #{k}",
                _clamped(randn(4, 1024, scale=1e14, offset=3e14, dtype=F64, seed=4130 + k), 1e15, BF16),
                4230 + k,
            ),
            case(
                f"bfloat16 (4, 1024), 1e-30*(2 + randn), eps=1e-12, #{k}",
                randn(4, 1024, scale=1e-30, offset=2e-30, dtype=BF16, seed=4140 + k),
                4240 + k,
                eps=1e-12,
            ),
            case(f"float32 (4, 1024), 1e12 + 1e6*randn, #{k}", randn(4, 1024, scale=1e6, offset=1e12, dtype=F32, seed=4150 + k), 4250 + k),
        ]
    return run_cases(solution, cases)


def _rows_of_magnitudes(d: int, dtype: torch.dtype, seed: int, scales: tuple[float, ...]) -> torch.Tensor:
    """One row per scale, each (1 + 0.5 randn) * scale, stacked into one tensor."""
    g = _gen(seed)
    rows = [(1.0 + 0.5 * torch.randn(d, generator=g, dtype=F64)) * scale for scale in scales]
    return torch.stack(rows).to(dtype)


@probe(category="range", check="within_layer_norm_bound_hidden", hints=["stats-dtype", "float32-stats"])
def rows_of_different_magnitudes(solution: Any) -> dict[str, Any]:
    """One tensor whose rows differ in magnitude by up to 50 decades: each row is normalised on its own."""
    cases: list[Case] = []
    for k in range(2):
        cases += [
            case(
                f"float32 (5, 256), rows from 1e15 to 1e-38, #{k}", _rows_of_magnitudes(256, F32, 5500 + k, (1e15, 1e3, 1.0, 1e-20, 1e-38)), 5600 + k
            ),
            case(f"bfloat16 (4, 512), rows from 1e15 to 1e-38, #{k}", _rows_of_magnitudes(512, BF16, 5510 + k, (1e15, 1.0, 1e-20, 1e-38)), 5610 + k),
            case(
                f"float16 (4, 256), rows from 1e4 to 1e-6, #{k}", _rows_of_magnitudes(256, F16, 5520 + k, (1e4, 1.0, 1e-3, 1e-6)), 5620 + k, eps=1e-12
            ),
        ]
    return run_cases(solution, cases)


@probe(category="range", check="within_layer_norm_bound_hidden", hints=["stats-dtype", "float32-stats"])
def subnormal_values(solution: Any) -> dict[str, Any]:
    """Rows of subnormal numbers: float16's (below 6.1e-5), and float32's and bfloat16's (below 1.2e-38)."""
    cases: list[Case] = []
    for k in range(2):
        cases += [
            case(f"float16 (8, 256), 3e-6*randn, eps=1e-12, #{k}", randn(8, 256, scale=3e-6, dtype=F16, seed=5100 + k), 5200 + k, eps=1e-12),
            case(f"float16 (8, 256), 1e-5 + 3e-6*randn, #{k}", randn(8, 256, scale=3e-6, offset=1e-5, dtype=F16, seed=5110 + k), 5210 + k),
            case(f"float32 (4, 256), 1e-40*randn, #{k}", randn(4, 256, scale=1e-40, dtype=F32, seed=5120 + k), 5220 + k),
            case(f"bfloat16 (4, 256), 1e-39*randn, #{k}", randn(4, 256, scale=1e-39, dtype=BF16, seed=5130 + k), 5230 + k),
            case(
                f"float32 (4, 256), 1e-39 + 1e-38*randn, eps=1e-12, #{k}",
                randn(4, 256, scale=1e-38, offset=1e-39, dtype=F32, seed=5140 + k),
                5240 + k,
                eps=1e-12,
            ),
        ]
    return run_cases(solution, cases)


def _log_uniform(n: int, low: float, high: float, g: torch.Generator) -> torch.Tensor:
    """n values of random sign whose magnitudes are log-uniform in [10^low, 10^high]."""
    sign = torch.where(torch.rand(n, generator=g, dtype=F64) < 0.5, -1.0, 1.0).to(F64)
    return sign * 10.0 ** (low + (high - low) * torch.rand(n, generator=g, dtype=F64))


def _large_affine_case(name: str, x: torch.Tensor, seed: int, w_range: tuple[float, float], b_scale: float, eps: float = 1e-5) -> Case:
    """x with a weight of magnitude 10^w_range (random signs) and a bias of b_scale * randn, passed all by keyword."""
    g = _gen(seed)
    d = x.shape[-1]
    weight = _log_uniform(d, w_range[0], w_range[1], g).to(x.dtype)
    bias = (b_scale * torch.randn(d, generator=g, dtype=F64)).to(x.dtype)
    return Case(name, x, weight, bias, eps, "all by keyword")


@probe(category="range", check="within_layer_norm_bound_hidden", hints=["affine-order"])
def large_weights_and_biases(solution: Any) -> dict[str, Any]:
    """Weights and biases far from 1: up to 1e33 against activations of 1e15, where y itself stays finite.

    y* = (x - mean) * rstd * w + b is at most about sqrt(D) |w| + |b|, within
    range here, but w * (x - mean) reaches 1e39 to 1e42 (the textbook
    gamma * (x - mean) / sigma order overflows float32), and so does
    mean * rstd * w (folding the affine step into x * a + (b - mean * a)).
    """
    cases: list[Case] = []
    for k in range(2):
        cases += [
            _large_affine_case(
                f"bfloat16 (8, 256), 3e14 + 1e14*randn, |w| 1e22 to 1e25, #{k}",
                _clamped(randn(8, 256, scale=1e14, offset=3e14, dtype=F64, seed=5300 + k), 1e15, BF16),
                5400 + k,
                (22.0, 25.0),
                1e24,
            ),
            _large_affine_case(
                f"float32 (8, 512), 1e15 + 1e9*randn, |w| 1e31 to 1e33, #{k}",
                randn(8, 512, scale=1e9, offset=1e15, dtype=F32, seed=5310 + k),
                5410 + k,
                (31.0, 33.0),
                1e32,
            ),
            _large_affine_case(f"float32 (4, 256), all -1e15, |w| 1e23 to 1e25, #{k}", torch.full((4, 256), -1e15), 5420 + k, (23.0, 25.0), 1.0),
            _large_affine_case(
                f"bfloat16 (4, 128), all 1e15, |w| 1e23 to 1e25, #{k}", torch.full((4, 128), 1e15, dtype=BF16), 5430 + k, (23.0, 25.0), 1e3
            ),
            _large_affine_case(
                f"float32 (4, 256), 2 + randn, |w| 0.1 to 10, bias 1e37*randn, #{k}",
                randn(4, 256, offset=2.0, dtype=F32, seed=5340 + k),
                5440 + k,
                (-1.0, 1.0),
                1e37,
            ),
            _large_affine_case(
                f"float16 (4, 512), 2e4*randn, |w| 100 to 4000, bias 5000*randn, #{k}",
                _clamped(randn(4, 512, scale=2e4, dtype=F64, seed=5350 + k), 65504.0, F16),
                5450 + k,
                (2.0, 3.6),
                5000.0,
            ),
        ]
    return run_cases(solution, cases)


@probe(category="range", check="within_layer_norm_bound_hidden", hints=["affine-order"])
def large_weights_on_small_spreads(solution: Any) -> dict[str, Any]:
    """Weights of 1e33 to 2.5e38 on rows whose rstd is large: constant rows, and small spreads with a small eps.

    Every exact (x - mean) * rstd * w and y fits (a constant row's y is its
    bias), but rstd * w is past float32's largest value (3.4e38) on every
    element: folding rstd into the weight first, (x - mean) * (rstd * w),
    gives inf, and 0 * inf = NaN on a constant row. (x - mean) * rstd is at
    most sqrt(D) whatever rstd is, so (x - mean) * rstd * w stays finite.
    A float16 weight is at most 65504 and rstd at most 1e6: their product
    cannot overflow float32, so the float16 case, a constant row with eps =
    1e-12 and weights up to 6e4, only overflows float16 itself.
    """
    cases: list[Case] = []
    for k in range(2):
        cases += [
            _large_affine_case(f"float32 (4, 64), all 7, |w| 1e37 to 2.5e38, #{k}", torch.full((4, 64), 7.0), 5700 + k, (37.0, 38.4), 1.0),
            _large_affine_case(
                f"float32 (4, 256), all -0.375, eps=1e-12, |w| 1e33 to 1e36, #{k}",
                torch.full((4, 256), -0.375),
                5710 + k,
                (33.0, 36.0),
                1e30,
                eps=1e-12,
            ),
            _large_affine_case(
                f"float32 (8, 64), 1 + 1e-4*randn, eps=1e-12, |w| 1e35 to 1e36, #{k}",
                randn(8, 64, scale=1e-4, offset=1.0, dtype=F32, seed=5720 + k),
                5730 + k,
                (35.0, 36.0),
                1e30,
                eps=1e-12,
            ),
            _large_affine_case(
                f"bfloat16 (4, 128), all 2.5, |w| 1e37 to 2.5e38, #{k}", torch.full((4, 128), 2.5, dtype=BF16), 5740 + k, (37.0, 38.4), 1e3
            ),
            _large_affine_case(
                f"bfloat16 (8, 64), 1.5 but an ulp, eps=1e-12, |w| 1e36 to 1e37, #{k}",
                near_constant_data(8, 64, BF16, 5750 + k, 1.5, 1),
                5760 + k,
                (36.0, 37.0),
                1e35,
                eps=1e-12,
            ),
            _large_affine_case(
                f"float16 (4, 128), all 0.75, eps=1e-12, |w| 1e4 to 6e4, #{k}",
                torch.full((4, 128), 0.75, dtype=F16),
                5770 + k,
                (4.0, 4.77),
                100.0,
                eps=1e-12,
            ),
        ]
    return run_cases(solution, cases)


def _zero_rows(n: int, d: int, dtype: torch.dtype, seed: int, signs: str) -> torch.Tensor:
    """n rows of zeros: all +0.0 (signs="+"), all -0.0 ("-"), or each element's sign drawn at random ("mixed")."""
    if signs == "+":
        return torch.zeros(n, d, dtype=dtype)
    if signs == "-":
        return torch.full((n, d), -0.0, dtype=dtype)
    negative = torch.rand(n, d, generator=_gen(seed), dtype=F64) < 0.5
    return torch.where(negative, torch.tensor(-0.0, dtype=F64), torch.tensor(0.0, dtype=F64)).to(dtype)


def _with_zero_rows(x: torch.Tensor, rows: tuple[int, ...], seed: int) -> torch.Tensor:
    """x with the given rows replaced by zeros, every second of them -0.0, the last one of random signs."""
    x = x.clone()
    for i, row in enumerate(rows):
        signs = "mixed" if i == len(rows) - 1 else "-" if i % 2 else "+"
        x[row] = _zero_rows(1, x.shape[-1], x.dtype, seed + i, signs)[0]
    return x


@probe(category="cancellation", check="within_layer_norm_bound_hidden", hints=["eps-placement", "scaling"])
def zero_rows(solution: Any) -> dict[str, Any]:
    """Rows of zeros, +0.0, -0.0 and mixed signs, alone and among ordinary rows, in all three dtypes.

    A row of zeros is a constant row: mean 0, rstd 1/sqrt(eps), y the bias.
    Dividing a row by its largest or mean |x| (to keep squares in range)
    without a guard for 0 makes 0/0 = NaN of every output.
    """
    return run_cases(
        solution,
        [
            case("float32 (4, 256), all +0", _zero_rows(4, 256, F32, 8000, "+"), 8100),
            case("bfloat16 (4, 128), all -0", _zero_rows(4, 128, BF16, 8001, "-"), 8101),
            case("float16 (4, 64), zeros of either sign, eps=1e-12", _zero_rows(4, 64, F16, 8002, "mixed"), 8102, eps=1e-12),
            case(
                "float32 (8, 512), 0.5 + 2*randn but rows 0, 3 and 7 zero, eps not passed",
                _with_zero_rows(randn(8, 512, scale=2.0, offset=0.5, dtype=F32, seed=8003), (0, 3, 7), 8013),
                8103,
                eps=None,
            ),
            case(
                "bfloat16 (6, 256), 1e4 + 64*randn but rows 1, 4 and 5 zero, eps=1e-12",
                _with_zero_rows(randn(6, 256, scale=64.0, offset=1e4, dtype=BF16, seed=8004), (1, 4, 5), 8014),
                8104,
                eps=1e-12,
            ),
            case(
                "float16 (6, 128), 300*randn but rows 2, 3 and 5 zero, eps=0.1",
                _with_zero_rows(randn(6, 128, scale=300.0, dtype=F16, seed=8005), (2, 3, 5), 8015),
                8105,
                eps=0.1,
            ),
            case("float32 (2, 3, 32), all -0, eps=1e-12", _zero_rows(6, 32, F32, 8006, "-").reshape(2, 3, 32), 8106, eps=1e-12),
            case("bfloat16 (64,), zeros of either sign", _zero_rows(1, 64, BF16, 8007, "mixed")[0], 8107),
        ],
    )


def _sparse_rows(n: int, d: int, dtype: torch.dtype, seed: int, magnitude: float, most: int) -> torch.Tensor:
    """Rows of zeros but for 1 to ``most`` elements (the first row: only its first; the second: only its last) of
    random sign and a magnitude log-uniform in [magnitude / 10, magnitude]."""
    g = _gen(seed)
    x = torch.zeros(n, d, dtype=F64)
    for row in range(n):
        k = 1 if row < 2 else 1 + int(torch.randint(0, most, (1,), generator=g))
        cols = torch.tensor([0]) if row == 0 else torch.tensor([d - 1]) if row == 1 else torch.randperm(d, generator=g)[:k]
        x[row, cols] = _log_uniform(len(cols), math.log10(magnitude) - 1.0, math.log10(magnitude), g)
    return x.to(dtype)


@probe(category="outliers", check="within_layer_norm_bound_hidden", hints=["outliers", "scaling"])
def sparse_rows(solution: Any) -> dict[str, Any]:
    """Rows of zeros but for one or a few elements (first, last or anywhere), of small to huge magnitude, in all three dtypes.

    The median |x| of such a row is 0: a solution that scales rows by it
    (or by another robust statistic that ignores a few channels) divides by 0.
    """
    return run_cases(
        solution,
        [
            case("float32 (8, 256), zeros but 1 to 3 elements of about 1", _sparse_rows(8, 256, F32, 8200, 1.0, 3), 8300),
            case("float32 (6, 1024), zeros but one element of up to 1e15", _sparse_rows(6, 1024, F32, 8201, 1e15, 1), 8301),
            case("bfloat16 (8, 512), zeros but 1 to 4 elements of up to 1e15", _sparse_rows(8, 512, BF16, 8202, 1e15, 4), 8302),
            case("bfloat16 (6, 128), zeros but one element of about 1e-30, eps=1e-12", _sparse_rows(6, 128, BF16, 8203, 1e-30, 1), 8303, eps=1e-12),
            case("float16 (8, 64), zeros but 1 to 2 elements of up to 6e4", _sparse_rows(8, 64, F16, 8204, 6e4, 2), 8304),
            case("float16 (6, 256), zeros but one element of about 0.01, eps=1e-10", _sparse_rows(6, 256, F16, 8205, 0.01, 1), 8305, eps=1e-10),
            case("float32 (4, 2), zeros but one element", _sparse_rows(4, 2, F32, 8206, 10.0, 1), 8306),
        ],
    )


@probe(category="range", check="within_layer_norm_bound_hidden", hints=["scaling", "eps-placement"])
def constant_subnormal_rows(solution: Any) -> dict[str, Any]:
    """Constant rows of subnormal values, down to each dtype's smallest: the variance is 0 and 1/|x| overflows.

    A row scaled by the reciprocal of its largest or mean |x| gets inf there
    (1 / 1e-40 is past float32's largest value), and inf - inf = NaN.
    """
    tiny32, tiny16, tinybf = 2.0**-149, 2.0**-24, 2.0**-133
    return run_cases(
        solution,
        [
            case("float32 (4, 256), all 1e-40", torch.full((4, 256), 1e-40), 8400),
            case("float32 (4, 64), all -(smallest subnormal), eps=1e-12", torch.full((4, 64), -tiny32), 8401, eps=1e-12),
            case("bfloat16 (4, 128), all -1e-39", torch.full((4, 128), -1e-39, dtype=BF16), 8402),
            case("bfloat16 (4, 64), all the smallest subnormal, eps=1e-12", torch.full((4, 64), tinybf, dtype=BF16), 8403, eps=1e-12),
            case("float16 (4, 128), all 3e-5", torch.full((4, 128), 3e-5, dtype=F16), 8404),
            case("float16 (4, 64), all -(smallest subnormal), eps=1e-12", torch.full((4, 64), -tiny16, dtype=F16), 8405, eps=1e-12),
        ],
    )


# ---------------------------------------------------------------- layouts


@probe(category="layout", check="within_layer_norm_bound_hidden", hints=["shapes"])
def size_one_dimensions(solution: Any) -> dict[str, Any]:
    """Inputs with a size-1 dimension in every position: leading, middle, last (D = 1), and several at once."""
    return run_cases(
        solution,
        [
            case("float32 (1, 256)", randn(1, 256, scale=2.0, offset=0.5, dtype=F32, seed=6100), 6200),
            case("bfloat16 (4, 1, 128)", randn(4, 1, 128, offset=1.0, dtype=BF16, seed=6101), 6201),
            case("float16 (1, 3, 64)", randn(1, 3, 64, scale=3.0, dtype=F16, seed=6102), 6202),
            case("float32 (1, 1, 32)", randn(1, 1, 32, offset=1e3, dtype=F32, seed=6103), 6203),
            case("bfloat16 (3, 1)", randn(3, 1, scale=5.0, dtype=BF16, seed=6104), 6204),
            case("float32 (1, 1)", randn(1, 1, offset=7.0, dtype=F32, seed=6105), 6205),
            case("float16 (1,)", randn(1, scale=2.0, dtype=F16, seed=6106), 6206),
            case("float32 (2, 1, 1)", randn(2, 1, 1, scale=4.0, dtype=F32, seed=6107), 6207),
            case("float16 (3, 2, 1)", randn(3, 2, 1, scale=100.0, dtype=F16, seed=6108), 6208),
            case("bfloat16 (1, 5, 1)", randn(1, 5, 1, offset=1e4, dtype=BF16, seed=6109), 6209),
        ],
    )


@probe(category="layout", check="within_layer_norm_bound_hidden", hints=["shapes"])
def empty_inputs(solution: Any) -> dict[str, Any]:
    """Inputs with no rows at all, in every dtype and with more than one leading dimension."""
    return run_cases(
        solution,
        [
            case("float16 (0, 64)", randn(0, 64, dtype=F16, seed=6700), 6800),
            case("bfloat16 (2, 0, 64)", randn(2, 0, 64, dtype=BF16, seed=6701), 6801),
            case("float32 (0, 3, 16)", randn(0, 3, 16, dtype=F32, seed=6702), 6802),
            case("float32 (0, 1)", randn(0, 1, dtype=F32, seed=6703), 6803),
        ],
    )


@probe(category="layout", check="within_layer_norm_bound_hidden", hints=["shapes", "float32-stats"])
def empty_half_precision_inputs(solution: Any) -> dict[str, Any]:
    """float16 and bfloat16 inputs of two dimensions with no rows: mean and rstd are still float32, of shape (0,).

    A shortcut for inputs with no rows that builds the statistics like x
    (x.new_empty, torch.empty_like) makes them float16 or bfloat16; unlike
    empty_inputs, every shape here is (0, D), so a shortcut that returns flat
    float32 statistics passes.
    """
    return run_cases(
        solution,
        [
            case("float16 (0, 64)", randn(0, 64, dtype=F16, seed=6710), 6810),
            case("bfloat16 (0, 8)", randn(0, 8, dtype=BF16, seed=6711), 6811),
            case("float16 (0, 1)", randn(0, 1, dtype=F16, seed=6712), 6812),
            case("bfloat16 (0, 512), eps=1e-12", randn(0, 512, dtype=BF16, seed=6713), 6813, eps=1e-12),
        ],
    )


@probe(category="layout", check="within_layer_norm_bound_hidden", hints=["shapes"])
def strided_views(solution: Any) -> dict[str, Any]:
    """Non-contiguous inputs: a strided slice, broadcast views (stride 0 along a row or across rows), transposed and offset views."""
    return run_cases(
        solution,
        [
            case("float32 (6, 128), every second column", randn(6, 256, scale=2.0, offset=1e3, dtype=F32, seed=6300)[:, ::2], 6400),
            case("bfloat16 (5, 512), one row expanded", randn(1, 512, scale=3.0, offset=1.0, dtype=BF16, seed=6301).expand(5, 512), 6401),
            case("float16 (2, 16, 64), transposed last two", randn(2, 64, 16, scale=2.0, offset=1024.0, dtype=F16, seed=6302).transpose(1, 2), 6402),
            case("float32 (4, 256), window at an offset", randn(8, 300, offset=-50.0, dtype=F32, seed=6303)[2:6, 10:266], 6403),
            case("bfloat16 (3, 4, 96), permuted", randn(96, 3, 4, scale=64.0, offset=1e4, dtype=BF16, seed=6304).permute(1, 2, 0), 6404),
            case(
                "float32 (6, 1000), one value per row broadcast along the row",
                randn(6, 1, scale=3.0, offset=100.0, dtype=F32, seed=6305).expand(6, 1000),
                6405,
            ),
            case(
                "float16 (2, 3, 100), one value broadcast everywhere",
                randn(1, 1, 1, scale=2.0, offset=300.0, dtype=F16, seed=6306).expand(2, 3, 100),
                6406,
            ),
        ],
    )


# A Welford loop over D = 16384 columns, watched by the probe's TorchFunctionMode, takes seconds (about 0.1 s for the
# reference): the probe's own time limit leaves room for a correct one-element-at-a-time solution on a busy host.
# The same goes, with 30 s, for the outlier, near-constant and dtype-limit probes (up to 8192 columns in all).
@probe(category="layout", timeout=60, check="within_layer_norm_bound_hidden", hints=["cancellation", "two-pass", "shapes"])
def large_and_odd_d(solution: Any) -> dict[str, Any]:
    """D = 16384, the largest allowed, in all three dtypes with a large mean, and odd sizes of D."""
    return run_cases(
        solution,
        [
            case("float32 (2, 16384), 1e4 + randn", randn(2, 16384, offset=1e4, dtype=F32, seed=6500), 6600),
            case("bfloat16 (2, 16384), 1e4 + 64*randn", randn(2, 16384, scale=64.0, offset=1e4, dtype=BF16, seed=6501), 6601),
            case("float16 (2, 16384), 1024 + 2*randn", randn(2, 16384, scale=2.0, offset=1024.0, dtype=F16, seed=6502), 6602),
            case("float32 (4, 3), 5 + randn", randn(4, 3, offset=5.0, dtype=F32, seed=6503), 6603),
            case("float16 (4, 7), 100 + randn", randn(4, 7, offset=100.0, dtype=F16, seed=6504), 6604),
            case("bfloat16 (4, 1000), 300 + 4*randn", randn(4, 1000, scale=4.0, offset=300.0, dtype=BF16, seed=6505), 6605),
        ],
    )


def _kept(n: int, seed: int, keep: int = 96, tail: int = 48) -> torch.Tensor:
    """The rows a large case sends back: the first two, the last ``tail`` and a seeded sample of the rest, in order."""
    g = _gen(seed)
    middle = 2 + torch.randperm(n - 2 - tail, generator=g)[: keep - 2 - tail]
    return torch.cat([torch.arange(2), middle.sort().values, torch.arange(n - tail, n)])


# Millions of elements, more than a row-chunked solution's chunk of 2^16 to 2^22 elements, with an odd row count, so
# that rows are left over after the last full chunk. Only some rows travel back (an observation holds at most 32 MiB),
# always including the last ones; the reference takes about 0.2 s on an idle machine.
@probe(category="layout", timeout=60, check="within_layer_norm_bound_hidden", hints=["shapes"])
def many_rows(solution: Any) -> dict[str, Any]:
    """4 to 5 million elements per input: float32 (4999, 1024), bfloat16 (301, 16384), float16 (2049, 2048), every row normalised."""
    return run_cases(
        solution,
        [
            case(
                "float32 (4999, 1024), 0.5 + 2*randn",
                randn(4999, 1024, scale=2.0, offset=0.5, dtype=F32, seed=6900),
                7000,
                call="weight and bias by keyword",
                rows=_kept(4999, 6910),
            ),
            case(
                "bfloat16 (301, 16384), 3 + randn",
                randn(301, 16384, offset=3.0, dtype=BF16, seed=6901),
                7001,
                call="weight and bias by keyword",
                rows=_kept(301, 6911, keep=56, tail=32),
            ),
            case(
                "float16 (2049, 2048), -2 + randn",
                randn(2049, 2048, offset=-2.0, dtype=F16, seed=6902),
                7002,
                call="weight and bias by keyword",
                rows=_kept(2049, 6912),
            ),
        ],
    )


# ---------------------------------------------------------------- repeated calls: nothing carried from one call to the next


def _in_sequence(solution: Any, steps: list[tuple[Callable[[], Case], Callable[[], Any] | None]]) -> dict[str, Any]:
    """Build each step's case when its turn comes, call layer_norm on it, then run the step's change (if any).

    Each case's observation keeps the inputs as they were at its own call
    (run_cases clones them) and the outputs as returned, not copied: an output
    a later call overwrites is checked as it is at the end.
    """
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    for make, change in steps:
        one = run_cases(solution, [make()])
        observation["violations"] += [v for v in one["violations"] if v not in observation["violations"]]
        observation["cases"].update(one["cases"])
        if change is not None:
            change()
    return observation


def _same_tensors_steps(label: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> list[tuple[Callable[[], Case], Any]]:
    """A call, then x, weight and bias changed in place one at a time, each followed by a call on the same tensors."""
    shape = f"{label} {tuple(x.shape)}"
    return [
        (lambda: Case(f"{shape}, first call", x, w, b, 1e-5), lambda: x.mul_(2).add_(3)),
        (lambda: Case(f"{shape}, x changed in place", x, w, b, 1e-5), lambda: w.mul_(-3)),
        (lambda: Case(f"{shape}, weight changed in place", x, w, b, 1e-5, "weight and bias by keyword"), lambda: b.add_(1)),
        (lambda: Case(f"{shape}, bias changed in place", x, w, b, 1e-5, "eps by keyword"), None),
    ]


def _same_storage_steps(label: str, n: int, d: int, dtype: torch.dtype, seed: int) -> list[tuple[Callable[[], Case], Any]]:
    """Three calls, each on new tensor objects over the same storage (same data_ptr, shape, strides and dtype),
    the earlier objects gone and new values written in between: what fresh tensors landing at freed addresses look like."""
    flat_x = randn(n * d, scale=2.0, offset=1.0, dtype=dtype, seed=seed)
    flat_w = randn(d, scale=0.2, offset=1.0, dtype=dtype, seed=seed + 1)
    flat_b = randn(d, scale=0.1, dtype=dtype, seed=seed + 2)

    def rewrite(j: int) -> None:
        g = _gen(seed + 10 + j)
        flat_x.copy_(torch.randn(n * d, generator=g, dtype=F64) * (1 + 3 * j) + (-4.0) ** j)
        flat_w.copy_(torch.randn(d, generator=g, dtype=F64) * 0.5 - j)
        flat_b.copy_(torch.randn(d, generator=g, dtype=F64) + 2 * j)

    def make(j: int) -> Case:
        return Case(f"{label} ({n}, {d}), new tensors over the same storage, call {j + 1}", flat_x.view(n, d), flat_w[:], flat_b[:], 1e-5)

    return [(lambda j=j: make(j), (lambda j=j: rewrite(j + 1)) if j < 2 else None) for j in range(3)]


@probe(category="basics", check="within_layer_norm_bound_hidden", hints=["state"])
def repeated_calls(solution: Any) -> dict[str, Any]:
    """Calls on the same tensors changed in place between them, on new tensors of the same shape, and on new tensors over the storage of earlier ones.

    In each dtype: a call, then x changed in place (a residual update) and a
    call, then weight (an optimizer step) and a call, then bias and a call;
    a call on new tensors of the same shape and dtype; then three calls on
    new tensor objects over one storage, rewritten between the calls. A
    cache keyed on a tensor's address, shape, strides or dtype (converted
    weights, the statistics of x) returns earlier values, and an output
    buffer reused by a later call of the same shape changes a result
    already returned (the observation keeps outputs as returned).
    """
    steps: list[tuple[Callable[[], Case], Any]] = []
    for i, (dtype, label, n, d, scale, offset) in enumerate(
        ((F32, "float32", 8, 256, 2.0, 0.5), (BF16, "bfloat16", 4, 512, 1.0, 3.0), (F16, "float16", 4, 128, 4.0, -1.0))
    ):
        seed = 8500 + 20 * i
        x = randn(n, d, scale=scale, offset=offset, dtype=dtype, seed=seed)
        first = case("", x, seed + 1)
        steps += _same_tensors_steps(label, x, first.weight, first.bias)
        fresh = case(
            f"{label} ({n}, {d}), new tensors of the same shape", randn(n, d, scale=scale / 4, offset=-offset, dtype=dtype, seed=seed + 2), seed + 3
        )
        steps.append((lambda fresh=fresh: fresh, None))
        steps += _same_storage_steps(label, n, d, dtype, seed + 5)
    return _in_sequence(solution, steps)


# ---------------------------------------------------------------- red team round 4: outputs that are views of the inputs


def _shared_storage(outputs: Any, inputs: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> str:
    """Which output shares memory with which input ("" if none): a view of x, weight or bias is not a new tensor."""
    if not isinstance(outputs, dict):
        return ""
    for label, out in outputs.items():
        if not isinstance(out, torch.Tensor) or out.untyped_storage().nbytes() == 0:
            continue
        for input_name, t in zip(("x", "weight", "bias"), inputs, strict=True):
            if t.untyped_storage().nbytes() and out.untyped_storage().data_ptr() == t.untyped_storage().data_ptr():
                return f"{label} shares memory with {input_name}"
    return ""


def _overwrite_inputs(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> None:
    """After a call: every element of x, weight and bias set to values no output of that call holds."""
    x.fill_(4242.0)
    weight.fill_(-77.0)
    bias.fill_(991.0)


@probe(category="basics", check="new_tensors_within_layer_norm_bound_hidden", hints=["state", "shapes"])
def outputs_are_new_tensors(solution: Any) -> dict[str, Any]:
    """Every output is a new tensor, even where its values are an input's: D = 1, constant and zero inputs, ordinary rows.

    With D = 1 every y is the bias and every mean is x; with constant rows y
    is the bias too. A shortcut that returns ``bias.expand(x.shape)``,
    ``x[..., 0]`` or ``x.squeeze(-1)`` (a view when x is float32, where
    ``x.to(torch.float32)`` is x itself) has the right values at the call,
    but the caller's results change when the caller changes its tensors. After
    each call x, weight and bias are overwritten in place; the observation
    keeps the outputs as returned, and notes any output that shares memory
    with an input.
    """
    inputs = [
        ("float32 (4, 1), D = 1", randn(4, 1, scale=3.0, offset=1.0, dtype=F32, seed=9000)),
        ("float32 (1,), D = 1, 1-D", randn(1, offset=5.0, dtype=F32, seed=9001)),
        ("float32 (2, 3, 1), D = 1", randn(2, 3, 1, scale=2.0, dtype=F32, seed=9002)),
        ("bfloat16 (3, 1), D = 1", randn(3, 1, scale=5.0, dtype=BF16, seed=9003)),
        ("float16 (2, 2, 1), D = 1", randn(2, 2, 1, scale=10.0, dtype=F16, seed=9004)),
        ("float32 (4, 64), all 2.5", torch.full((4, 64), 2.5)),
        ("float32 (4, 256), all +0", torch.zeros(4, 256)),
        ("float32 (64,), all -1.25, 1-D", torch.full((64,), -1.25)),
        ("float32 (4, 32), each row constant", torch.arange(4, dtype=F32).mul(0.5).sub(1.0).unsqueeze(-1).repeat(1, 32)),
        ("bfloat16 (4, 128), all -3", torch.full((4, 128), -3.0, dtype=BF16)),
        ("float16 (4, 64), all 0.75", torch.full((4, 64), 0.75, dtype=F16)),
        ("float32 (8, 256), 0.5 + 2*randn", randn(8, 256, scale=2.0, offset=0.5, dtype=F32, seed=9005)),
        ("bfloat16 (4, 128), 1 + randn", randn(4, 128, offset=1.0, dtype=BF16, seed=9006)),
        ("float16 (4, 64), -1 + 3*randn", randn(4, 64, scale=3.0, offset=-1.0, dtype=F16, seed=9007)),
    ]
    calls = ("positional", "eps by keyword", "weight and bias by keyword", "all by keyword")
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    for i, (name, x) in enumerate(inputs):
        one = case(name, x, 9100 + i, call=calls[i % len(calls)])
        result = run_cases(solution, [one])
        observation["violations"] += [v for v in result["violations"] if v not in observation["violations"]]
        observed = result["cases"][name]
        observed["shares storage"] = _shared_storage(observed["outputs"], (one.x, one.weight, one.bias))
        observation["cases"][name] = observed
        _overwrite_inputs(one.x, one.weight, one.bias)
    return observation


# ---------------------------------------------------------------- red team round 4: changes that keep a checksum


def _quantized(t: torch.Tensor, step: float, dtype: torch.dtype) -> torch.Tensor:
    """t rounded to a multiple of ``step`` (a power of two), then to dtype: small sums of such values are exact in
    float32 in any order, so a permutation keeps every sum of them, their float32 sum included."""
    return (t.to(F64) / step).round().mul(step).to(dtype)


def _even_bump(t: torch.Tensor, version: int) -> None:
    """One more in-place call that changes no value if t's version counter moved by an odd number since ``version``."""
    if (t._version - version) % 2:
        t.mul_(1)


def _permuting_steps(label: str, n: int, d: int, dtype: torch.dtype, seed: int) -> list[tuple[Callable[[], Case], Any]]:
    """Calls on tensors changed in place between them to a reordering of their own values: same address, shape,
    strides, dtype, sum (exactly, in float32) and every other symmetric summary, the version counter moved by 2."""
    x = _quantized(randn(n, d, scale=2.0, offset=0.5, dtype=F64, seed=seed), 2.0**-6, dtype)
    w = _quantized(randn(d, scale=0.5, offset=1.0, dtype=F64, seed=seed + 1), 2.0**-6, dtype)
    b = _quantized(randn(d, scale=0.5, dtype=F64, seed=seed + 2), 2.0**-6, dtype)
    shape = f"{label} ({n}, {d})"

    def change(t: torch.Tensor, reorder: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[], None]:
        def run() -> None:
            version = t._version
            t.copy_(reorder(t.clone()))
            _even_bump(t, version)

        return run

    def swap_two(t: torch.Tensor) -> torch.Tensor:
        i, j = 3, t.shape[-1] // 2 + 1
        out = t.clone()
        out[..., i], out[..., j] = t[..., j], t[..., i]
        return out

    return [
        (lambda: Case(f"{shape}, first call", x, w, b, 1e-5), change(w, lambda t: t.flip(0))),
        (lambda: Case(f"{shape}, weight reversed in place", x, w, b, 1e-5), change(b, swap_two)),
        (lambda: Case(f"{shape}, two bias entries swapped in place", x, w, b, 1e-5, "weight and bias by keyword"), change(w, lambda t: t.roll(1))),
        (lambda: Case(f"{shape}, weight rolled by one in place", x, w, b, 1e-5, "all by keyword"), change(x, lambda t: t.flip(0).roll(1, -1))),
        (lambda: Case(f"{shape}, x's rows reversed and rolled in place", x, w, b, 1e-5, "eps by keyword"), change(x, swap_two)),
        (lambda: Case(f"{shape}, two columns of x swapped in place", x, w, b, 1e-5), change(b, lambda t: t.flip(0))),
        (lambda: Case(f"{shape}, bias reversed, passed as a new view", x[:], w.view(d), b[:], 1e-5), None),
    ]


@probe(category="basics", check="within_layer_norm_bound_hidden", hints=["state"])
def reordered_in_place(solution: Any) -> dict[str, Any]:
    """Calls on the same tensors reordered in place between them: weight reversed or rolled, two bias entries or two
    columns of x swapped, x's rows reversed, in every dtype.

    A reordering keeps the address, shape, strides, dtype and every
    symmetric summary of the values: their sum (the values are multiples of
    2^-6, so every float32 sum of them is exact, in any order), sum of
    squares, minimum and maximum. A cache of converted weights or of
    statistics keyed on those, a checksum of the values included, returns
    the old values.
    """
    steps: list[tuple[Callable[[], Case], Any]] = []
    for i, (dtype, label, n, d) in enumerate(((F32, "float32", 8, 256), (BF16, "bfloat16", 4, 512), (F16, "float16", 4, 128))):
        steps += _permuting_steps(label, n, d, dtype, 9300 + 10 * i)
    return _in_sequence(solution, steps)


# ---------------------------------------------------------------- red team round 4: a cluster of far channels at the start


def leading_cluster_rows(n: int, d: int, dtype: torch.dtype, seed: int, sizes: tuple[int, ...], where: str, rest: float) -> torch.Tensor:
    """Rows whose first (where="first") or last ("last") k channels sit far from the rest, k = sizes[row % len(sizes)].

    The k far channels are 100 * (1 + 0.05 rand) with a random sign per row
    (30 * ... in float16); the rest are ``rest * randn`` (exact zeros for
    rest = 0). The variance is then about (k / D) 100^2: a one-pass variance
    shifted by the mean of the first (or last) few dozen channels subtracts
    two numbers about D / k times larger than it.
    """
    g = _gen(seed)
    magnitude = 30.0 if dtype == F16 else 100.0
    x = torch.randn(n, d, generator=g, dtype=F64) * rest
    for row in range(n):
        k = sizes[row % len(sizes)]
        sign = -1.0 if float(torch.rand(1, generator=g, dtype=F64)) < 0.5 else 1.0
        cols = slice(0, k) if where == "first" else slice(d - k, d)
        x[row, cols] += sign * magnitude * (1.0 + 0.05 * torch.rand(k, generator=g, dtype=F64))
    return x.to(dtype)


@probe(category="outliers", timeout=60, check="within_layer_norm_bound_hidden", hints=["outliers", "cancellation", "two-pass"])
def far_cluster_at_the_start(solution: Any) -> dict[str, Any]:
    """Rows whose first (or last) 16 to 64 channels are far from the rest, D = 4096 to 16384, in all three dtypes.

    A shift by the mean of the first 32 channels (robust to one massive
    activation, unlike a shift by x[0]) is no better than x[0] when those
    channels are a cluster of massive activations: against the float64
    truth, rstd is 2 to 4 times its bound away (float32, rest exactly 0).
    """
    sizes = (16, 24, 32, 40, 48, 64, 32, 28)
    return run_cases(
        solution,
        [
            case("float32 (8, 16384), zeros but the first 16 to 64", leading_cluster_rows(8, 16384, F32, 9500, sizes, "first", 0.0), 9600),
            case("float32 (8, 4096), zeros but the first 16 to 64, #0", leading_cluster_rows(8, 4096, F32, 9510, sizes, "first", 0.0), 9610),
            case("float32 (8, 4096), zeros but the first 16 to 64, #1", leading_cluster_rows(8, 4096, F32, 9511, sizes, "first", 0.0), 9611),
            case("float32 (8, 8192), 0.1*randn but the first 16 to 64", leading_cluster_rows(8, 8192, F32, 9520, sizes, "first", 0.1), 9620),
            case("float32 (8, 8192), zeros but the last 16 to 64", leading_cluster_rows(8, 8192, F32, 9530, sizes, "last", 0.0), 9630),
            case("bfloat16 (8, 8192), 0.1*randn but the first 16 to 64", leading_cluster_rows(8, 8192, BF16, 9540, sizes, "first", 0.1), 9640),
            case("float16 (8, 4096), zeros but the first 16 to 64", leading_cluster_rows(8, 4096, F16, 9551, sizes, "first", 0.0), 9651),
        ],
    )
