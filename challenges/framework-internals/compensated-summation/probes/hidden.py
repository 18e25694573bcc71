"""Hidden probes for compensated-summation: they make the score.

Every probe builds its inputs from a fixed seed with NumPy, calls the
candidate's ``total`` on each while watching the torch calls it makes, and
returns the inputs with the results. The check (``within_sum_bound`` in
checks.py, run in the trusted worker) computes the exact sum of the
reference run's inputs with ``math.fsum`` and compares each result with it
under the bound stated in the statement.
"""

from __future__ import annotations

import contextlib
import gc
import math
import random
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from probe_common import LAYOUTS, as_torch, cancelling_pairs, import_changes, laid_out, repeated, rng, run_cases, shuffled
from probekit import probe

# ---------------------------------------------------------------- accumulation


# Constants that a plain float32 torch.sum of a million terms gets wrong by more than 2u|S| (measured 1.2 to 3.3 times
# the bound): every partial sum rounds the same way, so its first-order error is not small even when nothing cancels.
ADVERSARIAL_CONSTANTS = {
    torch.float16: ((0.300048828125, 1_000_000), (0.4814453125, 1_100_000)),
    torch.bfloat16: ((0.83984375, 1_000_000), (0.7734375, 1_100_000)),
    torch.float32: ((0.9, 1_000_000), (1.0 + 3 * 2.0**-23, 1_000_000)),
}


def _constants(dtype: torch.dtype) -> dict[str, torch.Tensor]:
    label = str(dtype).removeprefix("torch.")
    return {f"{label} {c!r} repeated, n = {n:,} (contiguous)": torch.full((n,), c, dtype=dtype) for c, n in ADVERSARIAL_CONSTANTS[dtype]}


@probe(category="accumulation", weight=2, check="within_sum_bound", hints=["output-dtype", "accumulate-float32", "positive-rounding"], timeout=20)
def float16_all_positive(solution: Any) -> dict[str, Any]:
    """10^6 positive float16 values: the sum is far past float16's largest finite value; and constants a plain float32 sum misses."""
    x = as_torch(rng(1).random(1_000_000), torch.float16)
    return run_cases(solution, {"float16 uniform [0, 1), n = 1,000,000": x, **_constants(torch.float16)})


@probe(category="accumulation", check="within_sum_bound", hints=["output-dtype", "accumulate-float32", "positive-rounding"], timeout=20)
def bfloat16_all_positive(solution: Any) -> dict[str, Any]:
    """2^20 positive bfloat16 values, 100,000 bfloat16 ones, and constants a plain float32 sum misses."""
    x = as_torch(rng(2).random(1 << 20) * 4.0, torch.bfloat16)
    return run_cases(
        solution,
        {
            "bfloat16 uniform [0, 4), n = 2**20": x,
            "bfloat16 ones, n = 100,000": torch.ones(100_000, dtype=torch.bfloat16),
            **_constants(torch.bfloat16),
        },
    )


@probe(category="accumulation", check="within_sum_bound", hints=["accumulate-float32", "positive-rounding"], timeout=20)
def float32_lognormal(solution: Any) -> dict[str, Any]:
    """777,777 positive float32 values spread over a few decades, and constants a plain float32 sum misses."""
    x = as_torch(rng(3).lognormal(0.0, 2.0, 777_777), torch.float32)
    return run_cases(solution, {"float32 lognormal, n = 777,777": x, **_constants(torch.float32)})


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


@probe(category="cancellation", weight=2, check="within_sum_bound", hints=["cancellation", "compensation"], timeout=20)
def one_term_cancels_many_equal_ones(solution: Any) -> dict[str, Any]:
    """float32: many copies of 0.1 and one term that cancels nearly all of them, first or last.

    Every addition of 0.1 rounds, always the same way, so the rounding errors
    pile up: a compensation summed one error after another in float32 is off
    by about (number of errors) * u of their total, far past the bound's
    second-order term. The errors must be summed as carefully as the terms.
    """
    cases = {}
    for n in (299_999, 1_000_000):
        tenths = np.full(n, np.float32(0.1), dtype=np.float64)
        cancel = np.array([-tenths.sum()])
        cases[f"float32 one cancelling term, then {n:,} x 0.1"] = as_torch(np.concatenate([cancel, tenths]), torch.float32)
        cases[f"float32 {n:,} x 0.1, then one cancelling term"] = as_torch(np.concatenate([tenths, cancel]), torch.float32)
    return run_cases(solution, cases)


@probe(category="cancellation", check="within_sum_bound", hints=["cancellation", "compensation"], timeout=20)
def bfloat16_cancelling_pairs(solution: Any) -> dict[str, Any]:
    """bfloat16: large terms that cancel in pairs, among small ones."""
    r = rng(6)
    x = cancelling_pairs(r.uniform(1e3, 1e5, 300_000), r.random(300_000), torch.bfloat16, seed=60)
    return run_cases(solution, {"bfloat16 pairs in [1e3, 1e5) + small, n = 900,000": x})


# Per dtype: the magnitudes of short_cancelling's terms (10**U(lo, hi)), within float16's range for float16.
SHORT_MAGNITUDES = {torch.float32: (-2.0, 8.0), torch.bfloat16: (-3.0, 8.0), torch.float16: (-4.0, 4.0)}
SHORT_CANCELLING_LENGTHS = [*range(2, 18), 24, 31, 32, 33, 40]


def _in(dtype: torch.dtype, values: np.ndarray) -> np.ndarray:
    """``values`` rounded to ``dtype``, as float64."""
    return as_torch(values, dtype).to(torch.float32).numpy().astype(np.float64)


def _near_cancelling(r: np.random.Generator, n: int, dtype: torch.dtype) -> np.ndarray:
    """Terms of random sign, and two more that cancel their sum to a few units of the last place, shuffled.

    float32 terms have one magnitude (within a factor of 8), so they fill all 24 bits of the partial sums; float16 and
    bfloat16 ones are spread over many decades. The two last terms split minus the sum of the others between them, so
    the sum is far smaller than the partial sums, which round in any order, sorted by magnitude or not: a plain
    float32 sum, without compensation, is off by far more than the bound. Lengths below 4 get one such term.
    """
    lo, hi = SHORT_MAGNITUDES[dtype]
    k = n - 2 if n >= 4 else n - 1
    for _ in range(100):
        signs = np.where(r.random(k) < 0.5, -1.0, 1.0)
        if dtype == torch.float32:
            terms = _in(dtype, (1.0 + r.random(k)) * 2.0 ** (int(r.integers(-4, 21)) + r.integers(0, 3, k)) * signs)
        else:
            terms = _in(dtype, 10.0 ** r.uniform(lo, hi, k) * signs)
        rest = -math.fsum(terms.tolist())
        if n >= 4:
            half = _in(dtype, np.array([rest / 2]))
            terms = np.concatenate([terms, half, _in(dtype, np.array([rest - half[0]]))])
        else:
            terms = np.append(terms, _in(dtype, np.array([rest])))
        if np.abs(terms).max() < 6e4 or dtype != torch.float16:
            break
    return shuffled(terms, int(r.integers(1 << 30)))


def _pairs_among_small(r: np.random.Generator, n: int, dtype: torch.dtype) -> np.ndarray:
    """Pairs +b, -b of large terms (about (n - 1) / 2 of them) among smaller terms with many significant bits, shuffled."""
    lo, hi = SHORT_MAGNITUDES[dtype]
    pairs = max(1, (n - 1) // 2)
    big = _in(dtype, 10.0 ** r.uniform((lo + 3 * hi) / 4, hi, pairs))
    small = 10.0 ** r.uniform(lo, (lo + hi) / 2, n - 2 * pairs) * np.where(r.random(n - 2 * pairs) < 0.5, -1.0, 1.0)
    return shuffled(np.concatenate([big, -big, small]), int(r.integers(1 << 30)))


@probe(category="cancellation", weight=2, check="within_sum_bound", hints=["cancellation", "compensation"], timeout=20)
def short_cancelling(solution: Any) -> dict[str, Any]:
    """Large terms that cancel at short lengths (2 to 40), in every dtype and layout, and the statement's example.

    The bound holds at every length: a short input is summed with the same
    care as a long one. Each length has terms that nearly cancel (their
    partial sums round in any order, sorted by magnitude or not) and pairs of
    large terms among smaller ones, in a layout of LAYOUTS.
    """
    r = rng(21)
    cases: dict[str, torch.Tensor] = {
        "float32 [1, 1e8, 1, -1e8] (the statement's example)": torch.tensor([1.0, 1e8, 1.0, -1e8]),
        "bfloat16 [1, 1e8, 1, -1e8]": torch.tensor([1.0, 1e8, 1.0, -1e8], dtype=torch.bfloat16),
        "float32 [1e8, 1, -1e8]": torch.tensor([1e8, 1.0, -1e8]),
        "float32 [1, 1e8, -1e8]": torch.tensor([1.0, 1e8, -1e8]),
        "bfloat16 [1e8, 1, -1e8]": torch.tensor([1e8, 1.0, -1e8], dtype=torch.bfloat16),
        "float32 [0.1, 0.7, -0.8]": torch.tensor([0.1, 0.7, -0.8]),
        "float16 [65504, 0.001, -65504]": torch.tensor([65504.0, 0.001, -65504.0], dtype=torch.float16),
        "float16 [0.001, 65504, -65504, 0.001]": torch.tensor([0.001, 65504.0, -65504.0, 0.001], dtype=torch.float16),
        "float32 n = 6, found by a random search": torch.tensor([27779.71, 7023706.5, -19.02, 24811.46, -29617.78, -7046661.0]),
    }
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        label = str(dtype).removeprefix("torch.")
        for i, n in enumerate(SHORT_CANCELLING_LENGTHS):
            # float32 below 18 terms: several draws each, since a plain sum sorted by magnitude is exact on many of them.
            for j in range((6 if n < 10 else 3) if dtype == torch.float32 and n < 18 else 1):
                layout = LAYOUTS[(i + j) % len(LAYOUTS)]
                cases[f"{label} {layout}, n = {n}: nearly cancelling terms ({j + 1})"] = laid_out(_near_cancelling(r, n, dtype), dtype, layout)
            layout = LAYOUTS[(i + 2) % len(LAYOUTS)]
            cases[f"{label} {layout}, n = {n}: cancelling pairs among small terms"] = laid_out(_pairs_among_small(r, n, dtype), dtype, layout)
    return run_cases(solution, cases)


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


@probe(category="dynamic-range", check="within_sum_bound", hints=["compensation", "neumaier"], timeout=20)
def near_the_top_of_the_range(solution: Any) -> dict[str, Any]:
    """float32 and bfloat16 values up to 8e37, cancelling in pairs, with sum(|x|) just under the stated 2**127.

    A correct method never overflows here; one that scales or splits the terms
    (multiplies them by a constant, or adds a term to itself) reaches inf.
    """
    r = rng(13)
    cases: dict[str, torch.Tensor] = {
        "float32 [8e37, 1, -8e37, 2]": torch.tensor([8e37, 1.0, -8e37, 2.0]),
        "float32 [4e37, 4e37, -4e37, -4e37, 1]": torch.tensor([4e37, 4e37, -4e37, -4e37, 1.0]),
        "bfloat16 [2e37, 2e37, 2e37, 2e37, -2e37, -2e37, -2e37, -2e37, 3]": torch.tensor([2e37] * 4 + [-2e37] * 4 + [3.0], dtype=torch.bfloat16),
    }
    for dtype in (torch.float32, torch.bfloat16):
        label = str(dtype).removeprefix("torch.")
        big = 10.0 ** r.uniform(33.0, 35.5, 1_000)  # sum(|x|) about 7e37 over the 2,000 big terms
        small = r.uniform(-1e30, 1e30, 100_000)
        cases[f"{label} 10**U(33, 35.5) pairs + U(-1e30, 1e30), n = 102,000"] = cancelling_pairs(big, small, dtype, seed=130)
        signed = 10.0 ** r.uniform(20.0, 32.0, 1 << 20) * np.where(r.random(1 << 20) < 0.5, -1.0, 1.0)
        cases[f"{label} +-10**U(20, 32), n = 2**20"] = as_torch(signed, dtype)
    return run_cases(solution, cases)


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


def _layout_cases(dtype: torch.dtype, lengths: list[int], seed: int) -> dict[str, torch.Tensor]:
    """Every layout of LAYOUTS at every length, and a stride-0 repeat at a few, for one dtype."""
    r = rng(seed)
    label = str(dtype).removeprefix("torch.")
    cases: dict[str, torch.Tensor] = {}
    for n in lengths:
        values = r.uniform(-100.0, 100.0, n)
        for layout in LAYOUTS:
            cases[f"{label} {layout}, n = {n}"] = laid_out(values, dtype, layout)
    for n in (1, 4, 9, 12, 1024, 4160):
        cases[f"{label} stride 0: tensor(0.1).expand({n})"] = repeated(0.1, n, dtype)
    return cases


# Lengths that fill k rows of m lanes, a square or a power of two exactly, and the ones around them.
SHORT_LENGTHS = [*range(1, 41), 49, 56, 64, 100, 110, 121, 128, 256, 1000, 1023, 1024, 1056, 4096, 4160]


@probe(category="edge-cases", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def generated_layouts_float32(solution: Any) -> dict[str, Any]:
    """float32 in every layout x lengths 1 to 40 and lengths that fill a square or a power of two exactly.

    The layouts: contiguous, contiguous at a storage offset, every third element
    (from 0 and from 1), a column of a matrix, and a stride-0 repeat. Each view
    sits in a larger tensor of huge values, so code that reads memory the view
    does not show (assuming stride 1, offset 0 or a whole storage) is far off.
    float32 is where this matters most: converting it to float32 copies nothing.
    """
    return run_cases(solution, _layout_cases(torch.float32, SHORT_LENGTHS, seed=14))


@probe(category="edge-cases", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def generated_layouts_half(solution: Any) -> dict[str, Any]:
    """float16 and bfloat16 in every layout, at the short lengths of generated_layouts_float32 (every other one)."""
    lengths = [*SHORT_LENGTHS[::2], 1024, 1056]
    return run_cases(solution, {**_layout_cases(torch.float16, lengths, seed=17), **_layout_cases(torch.bfloat16, lengths, seed=18)})


@probe(category="edge-cases", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def generated_layouts_long(solution: Any) -> dict[str, Any]:
    """Long float32 views: every third element, a storage offset and a matrix column, at 10^6, 2^20 and 1048 x 1049."""
    r = rng(15)
    plan = [("every third", 1_000_000), ("every third from 1", 1 << 20), ("offset", 1_048 * 1_049), ("column of a matrix", 1 << 20)]
    return run_cases(solution, {f"float32 {layout}, n = {n:,}": laid_out(r.uniform(-1.0, 1.0, n), torch.float32, layout) for layout, n in plan})


@probe(category="edge-cases", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def stride_zero_and_half_long(solution: Any) -> dict[str, Any]:
    """tensor(0.1).expand(10**6) in every dtype (stride 0: one element seen a million times), and long half-precision views."""
    r = rng(19)
    cases = {
        f"{str(dtype).removeprefix('torch.')} stride 0: tensor(0.1).expand(10**6)": repeated(0.1, 1_000_000, dtype)
        for dtype in (torch.float32, torch.bfloat16, torch.float16)
    }
    cases["bfloat16 every third, n = 2**20"] = laid_out(r.uniform(-1.0, 1.0, 1 << 20), torch.bfloat16, "every third")
    cases["float16 every third from 1, n = 1,000,000"] = laid_out(r.uniform(-1.0, 1.0, 1_000_000), torch.float16, "every third from 1")
    return run_cases(solution, cases)


@probe(category="edge-cases", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def float32_bfloat16_subnormals(solution: Any) -> dict[str, Any]:
    """float32 and bfloat16 subnormal numbers (below 2**-126) as inputs, partial sums, rounding errors and results.

    The first input is ordinary, so a change to torch's settings made by one
    call (flush-to-zero) is in force for the calls after it as well.
    """
    r = rng(16)
    tiny32 = 2.0**-149  # float32's smallest subnormal; bfloat16's is 2**-133
    cases: dict[str, torch.Tensor] = {
        "float32 [1, 1e8, 1, -1e8]": torch.tensor([1.0, 1e8, 1.0, -1e8]),
        "float32 1,000 x 1e-40": torch.full((1_000,), 1e-40),
        "bfloat16 64 x 1e-39": torch.full((64,), 1e-39, dtype=torch.bfloat16),
        "float32 [1e-38, 2e-39, -1e-38] (a subnormal sum of normal terms)": torch.tensor([1e-38, 2e-39, -1e-38]),
        "float32 [2**-149, 2**-149, 2**-149]": torch.full((3,), tiny32),
    }
    cases["float32 subnormals, n = 100,003"] = as_torch(r.integers(1, 1 << 23, 100_003) * tiny32, torch.float32)
    cases["bfloat16 +-subnormals, n = 65,537"] = as_torch(
        r.integers(1, 128, 65_537) * 2.0**-133 * np.where(r.random(65_537) < 0.5, -1.0, 1.0), torch.bfloat16
    )
    for dtype in (torch.float32, torch.bfloat16):
        label = str(dtype).removeprefix("torch.")
        step = tiny32 if dtype == torch.float32 else 2.0**-133
        # Normal terms near 2**-126 that cancel in pairs, and a few subnormals: the sum is subnormal.
        cases[f"{label} pairs in [2**-126, 2**-120) + 7 subnormals"] = cancelling_pairs(
            2.0 ** r.uniform(-126.0, -120.0, 50_000), r.integers(-100, 100, 7) * step * (1000 if step == tiny32 else 1), dtype, seed=160
        )
        # Terms near 1e-37: every rounding error is subnormal.
        cases[f"{label} pairs in [1e-37, 1e-36) + U(0, 1e-38), n = 300,000"] = cancelling_pairs(
            r.uniform(1e-37, 1e-36, 100_000), r.uniform(0.0, 1e-38, 100_000), dtype, seed=161
        )
    return run_cases(solution, cases)


# ---------------------------------------------------------------- repeated calls: nothing kept from one call to the next


def _exact_integers(r: np.random.Generator, n: int, dtype: torch.dtype, shift: int) -> np.ndarray:
    """n integers that ``dtype`` holds exactly (also doubled), shifted so that their sum is far from 0.

    Every partial sum of them, and of their doubles, stays below 2**24, so any float32 summation in any
    order is exact: a call here fails only by summing other values than the ones x holds at that call.
    """
    top = 100 if dtype == torch.bfloat16 else 1000
    return (r.integers(-top, top + 1, n) + shift).astype(np.float64)


def _rebuilt(box: list[torch.Tensor], build: Callable[[], torch.Tensor]) -> torch.Tensor:
    """Free the tensor in ``box`` (its only reference), collect, and return a tensor from ``build()`` at its id.

    Everything the rebuild needs exists before the free, and the tries that
    land elsewhere are held until the end, so each next try gets other
    memory: a few hundred tries reach the freed address (the first almost
    always does), whatever took other memory meanwhile.
    """
    held: list[torch.Tensor] = []
    old = id(box[0])
    box.clear()
    gc.collect()
    for _ in range(500):
        t = build()
        if id(t) == old:
            return t
        held.append(t)
    return held[0]


class _Calls:
    """total() called once per input, in order, in this one process; every call's case gathered in one observation.

    Each case keeps x as it was at its own call (run_cases clones it) and the
    result as total() returned it, not a copy: a result that a later call
    changes is checked as it is at the end.
    """

    def __init__(self, solution: Any) -> None:
        self.solution = solution
        self.observation: dict[str, Any] = {"violations": [], "cases": {}}

    def __call__(self, name: str, x: torch.Tensor) -> None:
        one = run_cases(self.solution, {name: x})
        self.observation["violations"] += [v for v in one["violations"] if v not in self.observation["violations"]]
        self.observation["cases"].update(one["cases"])

    def then_change_its_result(self, name: str) -> None:
        """As a caller may: add to the result of call ``name`` in place (its case keeps a copy of it as returned)."""
        case = self.observation["cases"][name]
        result = case["result"]
        if isinstance(result, torch.Tensor):
            case["result"] = result.clone()
            with contextlib.suppress(Exception):  # a result that cannot be changed in place changes nothing later
                result.add_(1000)


def _repeated_calls_of_one_dtype(call: _Calls, dtype: torch.dtype, seed: int) -> None:
    r = rng(seed)
    label = str(dtype).removeprefix("torch.")
    n, m = 4096, 1001

    # (a) One tensor changed in place between calls: negated, then one middle element (the ends stay), then every
    # element rewritten; and a strided view whose buffer is changed under it.
    x = as_torch(_exact_integers(r, n, dtype, 7), dtype)
    call(f"{label} n = {n}: one tensor, call 1", x)
    x.neg_()
    call(f"{label} n = {n}: the same tensor negated in place, call 2", x)
    x[n // 2] += 9
    call(f"{label} n = {n}: one middle element of the same tensor changed in place, call 3", x)
    x.copy_(as_torch(_exact_integers(r, n, dtype, -6), dtype))
    call(f"{label} n = {n}: every element of the same tensor rewritten in place, call 4", x)
    buffer = torch.zeros(3 * m + 1, dtype=dtype)
    view = buffer[1::3]
    view.copy_(as_torch(_exact_integers(r, m, dtype, 5), dtype))
    call(f"{label} every third element of a buffer, n = {m}: call 1", view)
    buffer.mul_(-2)
    call(f"{label} every third element of a buffer, n = {m}: the buffer changed in place, call 2", view)

    # (b) New tensors that look like the earlier ones (shape, dtype, strides), with other values.
    call(f"{label} n = {n}: a new tensor of the same shape and dtype", as_torch(_exact_integers(r, n, dtype, 3), dtype))
    twin = x.clone()
    twin[n // 2] -= 11
    call(f"{label} n = {n}: a copy of the first tensor with one middle element changed", twin)
    call(f"{label} n = {m}: a new view of the same layout over a new buffer", laid_out(_exact_integers(r, m, dtype, -8), dtype, "every third from 1"))
    del x, twin, view, buffer

    # (c) Tensors freed (gc.collect()) and rebuilt with other values at the id of the one that is gone; then new
    # view objects over one buffer rewritten between calls, so the memory address is the same too.
    box = [as_torch(_exact_integers(r, n, dtype, 4), dtype)]
    call(f"{label} n = {n}: freed and rebuilt, call 1", box[0])
    for j, shift in ((2, -5), (3, 8)):
        values = as_torch(_exact_integers(r, n, dtype, shift), dtype)
        box.append(_rebuilt(box, values.clone))
        call(f"{label} n = {n}: freed and rebuilt, call {j}", box[0])
    buffer = torch.zeros(3 * m + 1, dtype=dtype)
    box = [buffer[1::3]]
    box[0].copy_(as_torch(_exact_integers(r, m, dtype, -3), dtype))
    call(f"{label} views over one buffer, n = {m}: call 1", box[0])
    for j, shift in ((2, 6), (3, -7)):
        buffer[1::3] = as_torch(_exact_integers(r, m, dtype, shift), dtype)
        box.append(_rebuilt(box, lambda: buffer[1::3]))
        call(f"{label} views over one buffer, n = {m}: a new view after the buffer was rewritten, call {j}", box[0])

    # (d) What the caller does with what it holds. One element, its result kept while the tensor is then changed in
    # place (a result that is a view of x changes with it), in two layouts; and results the caller adds to in place,
    # each followed by a call on the same tensor and one on another (a result kept and returned again changes them).
    for layout in ("contiguous", "every third from 1"):
        one = laid_out(_exact_integers(r, 1, dtype, 5), dtype, layout)
        call(f"{label} n = 1, {layout}: its input is changed in place after the call", one)
        one.add_(3)
        del one
    for k in (0, 1, 2, n):
        x = as_torch(_exact_integers(r, k, dtype, -4), dtype)
        name = f"{label} n = {k}: a call whose result the caller then adds to"
        call(name, x)
        call.then_change_its_result(name)
        call(f"{label} n = {k}: the same tensor again, after the caller changed the earlier result", x)
        call(f"{label} n = {k}: another tensor, after the caller changed the earlier result", as_torch(_exact_integers(r, k, dtype, 2), dtype))


@probe(category="edge-cases", check="each_call_within_sum_bound", hints=["state"], timeout=20)
def repeated_calls(solution: Any) -> dict[str, Any]:
    """Many calls in one process: tensors changed in place between calls, new look-alike tensors, and tensors freed and rebuilt.

    In each dtype: one tensor summed, then changed in place (negated, one
    middle element, every element) and summed again after each change; a
    strided view whose buffer changes under it; new tensors of the same
    shape, dtype and strides with other values; tensors freed, collected and
    rebuilt with other values at the same id, and new views over one buffer
    rewritten between calls (the same address too). Every value is an
    integer whose float32 sums are exact in any order, so only a sum of
    other values than x holds at its call fails: a cache keyed on id(x), on
    the tensor object, on its shape, strides and dtype, or a converted copy
    kept between calls. Results are kept as returned, so an output tensor a
    later call reuses fails too, and so does a result that is a view of x when
    x is changed after the call; and the caller adds to some results in place,
    which must change no later result (a zero kept for the empty sum).
    """
    call = _Calls(solution)
    # What exists now (torch, the candidate's module) is set aside from collection, so each gc.collect() walks only
    # what the probe and the calls made since: a fraction of a second less for each of the twelve.
    gc.freeze()
    try:
        for i, dtype in enumerate((torch.float32, torch.float16, torch.bfloat16)):
            _repeated_calls_of_one_dtype(call, dtype, seed=2000 + i)
    finally:
        gc.unfreeze()
    return call.observation


# ---------------------------------------------------------------- the caller's settings, moved before the call
#
# Red team round 3: every probe above calls total() from torch's default settings, where putting back a default (or a
# value read at import) cannot be told from leaving a setting as the call found it. These probes move one setting away
# from its default first, as a caller may, and check after every call that it is still as the probe set it: the
# settings run_cases reads (torch's global settings, grad and inference mode, flush-to-zero by behaviour) and the
# probe's own (the solution's view of the thread count, the random generators). Every value is a small integer, so
# any sum is exact (with flush-to-zero on too): these probes fail a call for what it leaves, not for how it adds.


# Every input of these probes, kept alive until the probe's process ends: no two get one id, so a solution's memo on
# ids (caught by repeated_calls) sees only new tensors here, and these probes fail only what they are about.
_HELD_INPUTS: list[dict[str, torch.Tensor]] = []


def _settings_cases(label: str, seed: int) -> dict[str, torch.Tensor]:
    """Inputs of every dtype and length class (empty, one term, short, long, a strided view) that any sum gets right.

    Small integers of both signs, shifted off zero: every partial sum is an integer below 2**24, so a float32 sum in
    any order is exact. A call here fails on the settings it leaves (or on its result's dtype, shape or kind), not on
    how carefully it adds.
    """
    r = rng(seed)

    def integers(n: int, dtype: torch.dtype, layout: str = "contiguous") -> torch.Tensor:
        return laid_out((r.integers(-20, 21, n) + 3).astype(np.float64), dtype, layout)

    cases = {
        f"{label}: float32 [1, 2, 3, -4]": torch.tensor([1.0, 2.0, 3.0, -4.0]),
        f"{label}: float32 n = 0": torch.zeros(0),
        f"{label}: float16 n = 1": integers(1, torch.float16),
        f"{label}: bfloat16 every third from 1, n = 1,001": integers(1_001, torch.bfloat16, "every third from 1"),
        f"{label}: float16 n = 30,000": integers(30_000, torch.float16),
        f"{label}: float32 column of a matrix, n = 100,003": integers(100_003, torch.float32, "column of a matrix"),
    }
    _HELD_INPUTS.append(cases)
    return cases


def _merge(into: dict[str, Any], one: dict[str, Any]) -> None:
    into["violations"] += [v for v in one["violations"] if v not in into["violations"]]
    into["cases"].update(one["cases"])


def _calls_keeping(
    solution: Any, cases: dict[str, torch.Tensor], what: str, read: Callable[[], Any], put_back: Callable[[Any], None]
) -> dict[str, Any]:
    """total() on each case through run_cases (the rules, and torch's settings after each call), and ``read()`` after
    each call as it was before it: otherwise a violation naming ``what``, and the probe puts it back for the next call."""
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    for name, x in cases.items():
        before = read()
        one = run_cases(solution, {name: x})
        if read() != before:
            one["violations"].append(f"total() left the caller's {what} changed")
            put_back(before)
        _merge(observation, one)
    return observation


def _nothing_else() -> None:
    return None


def _deterministic() -> tuple[bool, bool]:
    return torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()


def _set_deterministic(value: tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


@probe(category="edge-cases", check="within_sum_bound", hints=["settings-as-found"], timeout=20)
def deterministic_mode_set_by_the_caller(solution: Any) -> dict[str, Any]:
    """Calls made with deterministic algorithms on (warn_only off, then on): each must leave them as it found them."""
    import_changes(solution)  # the solution's top-level code re-run from the defaults, before anything moves
    found = _deterministic()
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    try:
        for i, warn_only in enumerate((False, True)):
            _set_deterministic((True, warn_only))
            label = f"use_deterministic_algorithms(True, warn_only={warn_only})"
            _merge(
                observation,
                _calls_keeping(solution, _settings_cases(label, 3000 + 10 * i), "deterministic algorithms", _deterministic, _set_deterministic),
            )
    finally:
        _set_deterministic(found)
    return observation


def _stand_in_threads() -> Any:
    """The probe runner's stand-in thread count (sandbox/runner/process_state.py), or None outside the runner.

    Calls from the solution's file to ``torch.get_num_threads`` see ``THREADS.count``, which only their own
    ``torch.set_num_threads`` moves (the sandbox runs torch on one thread, which a call setting one thread would
    leave as it is). A caller that sets another count moves both: the solution must find that count and leave it.
    """
    threads = getattr(sys.modules.get("process_state"), "THREADS", None)
    return threads if threads is not None and getattr(threads, "real", None) is not None else None


def _threads() -> tuple[int, Any]:
    """(torch's real thread count, the count the solution sees): what the caller set."""
    threads = _stand_in_threads()
    return torch.get_num_threads(), (threads.count if threads is not None else None)


def _set_threads(value: tuple[int, Any]) -> None:
    torch.set_num_threads(value[0])
    threads = _stand_in_threads()
    if threads is not None and value[1] is not None:
        threads.count = value[1]


@probe(category="edge-cases", check="within_sum_bound", hints=["settings-as-found"], timeout=20)
def thread_count_set_by_the_caller(solution: Any) -> dict[str, Any]:
    """Calls made after the caller set 2, then 5 threads (not the count at import): each must leave the count it found."""
    import_changes(solution)
    found = _threads()
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    try:
        for i, n in enumerate((2, 5)):
            _set_threads((n, n))
            _merge(
                observation,
                _calls_keeping(solution, _settings_cases(f"set_num_threads({n})", 3100 + 10 * i), "number of threads", _threads, _set_threads),
            )
    finally:
        _set_threads(found)
    return observation


def _grad_modes() -> tuple[bool, bool]:
    return torch.is_grad_enabled(), torch.is_inference_mode_enabled()


def _set_grad_mode(value: tuple[bool, bool]) -> None:
    torch.set_grad_enabled(value[0])  # inference mode is a context: only the probe's own `with` leaves it


@probe(category="edge-cases", check="within_sum_bound", hints=["settings-as-found"], timeout=20)
def called_inside_no_grad_and_inference_mode(solution: Any) -> dict[str, Any]:
    """Calls made inside the caller's torch.no_grad(), torch.inference_mode() and after set_grad_enabled(False).

    Grad mode is per thread, and it counts: a call that switches gradients back on
    (``set_grad_enabled(True)`` in a ``finally``) changes what the rest of the caller's block records.
    """
    import_changes(solution)
    found = torch.is_grad_enabled()
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    states: list[tuple[str, Callable[[], Any]]] = [
        ("inside torch.no_grad()", torch.no_grad),
        ("inside torch.inference_mode()", torch.inference_mode),
        ("after torch.set_grad_enabled(False)", contextlib.nullcontext),
    ]
    try:
        for i, (label, context) in enumerate(states):
            with context():
                torch.set_grad_enabled(False)
                _merge(observation, _calls_keeping(solution, _settings_cases(label, 3200 + 10 * i), "grad mode", _grad_modes, _set_grad_mode))
            torch.set_grad_enabled(found)
    finally:
        torch.set_grad_enabled(found)
    return observation


def _flushing() -> bool:
    """Whether float32 subnormals are flushed to zero (torch has no getter: read by behaviour)."""
    return bool((torch.full((8,), 1e-40, dtype=torch.float32) * 1.0 == 0).all())


@probe(category="edge-cases", check="within_sum_bound", hints=["settings-as-found"], timeout=20)
def flush_denormal_set_by_the_caller(solution: Any) -> dict[str, Any]:
    """Calls made with torch.set_flush_denormal(True) in force: each must leave it on (normal values only here)."""
    import_changes(solution)
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    if not torch.set_flush_denormal(True):  # a CPU without the flag: nothing to move (the same for every solution)
        return run_cases(solution, _settings_cases("flush-denormal unsupported", 3300))
    try:
        observation = _calls_keeping(
            solution, _settings_cases("set_flush_denormal(True)", 3300), "flush-denormal setting", _flushing, torch.set_flush_denormal
        )
    finally:
        torch.set_flush_denormal(False)
    return observation


def _random_streams() -> tuple[bytes, Any, Any]:
    """The state of torch's, NumPy's and Python's global random generators."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return bytes(torch.get_rng_state().numpy().tobytes()), (kind, keys.tobytes(), pos, has_gauss, gauss), random.getstate()


def _set_random_streams(value: tuple[bytes, Any, Any]) -> None:
    torch.set_rng_state(torch.frombuffer(bytearray(value[0]), dtype=torch.uint8))
    kind, keys, pos, has_gauss, gauss = value[1]
    np.random.set_state((kind, np.frombuffer(keys, dtype=np.uint32).copy(), pos, has_gauss, gauss))
    random.setstate(value[2])


@probe(category="edge-cases", check="within_sum_bound", hints=["settings-as-found"], timeout=20)
def random_stream_seeded_by_the_caller(solution: Any) -> dict[str, Any]:
    """Calls made after the caller seeded torch's (and NumPy's and Python's) global generators and drew from them.

    A sum needs no randomness; a call that reseeds a global generator or draws from it changes every number the
    caller draws next. The generators' states must be the same after each call as before it.
    """
    import_changes(solution)
    found = _random_streams()
    try:
        torch.manual_seed(20_261_207)
        np.random.seed(1207)
        random.seed(712)
        torch.rand(5), np.random.random(5), random.random()  # the caller is somewhere in its streams, not at a seed
        return _calls_keeping(
            solution, _settings_cases("a seeded random stream", 3400), "random number generator", _random_streams, _set_random_streams
        )
    finally:
        _set_random_streams(found)


@probe(category="edge-cases", check="within_sum_bound", hints=["state", "settings-as-found"], timeout=20)
def results_are_ordinary_tensors(solution: Any) -> dict[str, Any]:
    """Results of calls made outside inference mode (with grad on, and inside no_grad) must be ordinary tensors.

    An inference tensor (made under ``torch.inference_mode()``) raises when the caller changes it in place or
    uses it in a computation autograd records, which a result of ``torch.sum`` never does.
    """
    observation: dict[str, Any] = {"violations": [], "cases": {}}
    for i, (label, context) in enumerate((("grad on", contextlib.nullcontext), ("inside torch.no_grad()", torch.no_grad))):
        for name, x in _settings_cases(label, 3500 + 10 * i).items():
            with context():
                one = run_cases(solution, {name: x})
            result = one["cases"][name]["result"]
            if isinstance(result, torch.Tensor) and result.is_inference():
                one["violations"].append("total() returned an inference tensor, which the caller cannot change in place or use with autograd")
            _merge(observation, one)
    return observation


# ---------------------------------------------------------------- short subnormal sums and the top of the range


@probe(category="dynamic-range", check="within_sum_bound", hints=["edge-lengths"], timeout=20)
def short_subnormal_sums_and_huge_terms(solution: Any) -> dict[str, Any]:
    """Short float32 and bfloat16 inputs of odd multiples of the smallest subnormal, and of terms near 6e37, in every layout.

    Halving the terms (to keep them from overflowing) loses the last bit of a
    subnormal; scaling them up (to keep subnormals normal) overflows near the
    top of the range. Neither is needed: TwoSum is exact for both.
    """
    r = rng(36)
    cases: dict[str, torch.Tensor] = {}
    for dtype, tiny in ((torch.float32, 2.0**-149), (torch.bfloat16, 2.0**-133)):
        label = str(dtype).removeprefix("torch.")
        for i, n in enumerate((1, 2, 3, 5, 8, 17)):
            odd = (2 * r.integers(0, 8, n) + 1) * np.where(r.random(n) < 0.3, -1.0, 1.0)
            layout = LAYOUTS[i % len(LAYOUTS)]
            cases[f"{label} {layout}, n = {n}: odd multiples of {tiny!r}"] = laid_out(odd * tiny, dtype, layout)
            huge = np.concatenate([[6e37, -5e37, 3e37], r.uniform(-2.0, 2.0, n)])  # sum(|x|) about 1.4e38, below 2**127
            cases[f"{label} {layout}, n = {n + 3}: [6e37, -5e37, 3e37] and small terms"] = laid_out(
                shuffled(huge, 360 + i), dtype, LAYOUTS[(i + 1) % len(LAYOUTS)]
            )
    return run_cases(solution, cases)
