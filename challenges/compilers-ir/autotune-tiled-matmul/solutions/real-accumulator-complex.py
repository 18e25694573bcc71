"""MISTAKE: tiles of an inexact result are accumulated in a float64 buffer ("accumulate in double,
round once at the end"), then cast to np.result_type(A, B). Fine for float16/float32/float64 and
every integer type (accumulated in their own dtype), but a complex result (complex64 or
complex128 operands, or complex with anything) loses its imaginary part in the float64 buffer.
Oracle (red team round 2): complex128 5x7 @ 7x3: the imaginary part of the result is 0.
"""

from __future__ import annotations

import itertools
import random
import warnings
from collections.abc import Callable

import numpy as np


def tiled_matmul(
    A: np.ndarray, B: np.ndarray, ti: int, tj: int, tk: int, order: str = "ijk",
    on_tile: Callable[[int, int, int], None] | None = None,
) -> np.ndarray:  # fmt: skip
    M, K = A.shape
    K2, N = B.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {A.shape} @ {B.shape}")
    if sorted(order) != ["i", "j", "k"]:
        raise ValueError(f"order must be a permutation of 'ijk', got {order!r}")
    out_dtype = np.result_type(A, B)
    acc = np.float64 if np.issubdtype(out_dtype, np.inexact) else out_dtype  # round once, at the end
    C = np.zeros((M, N), dtype=acc)
    starts = {"i": range(0, M, ti), "j": range(0, N, tj), "k": range(0, K, tk)}
    for step in itertools.product(*(starts[axis] for axis in order)):
        at = dict(zip(order, step, strict=True))
        i0, j0, k0 = at["i"], at["j"], at["k"]
        if on_tile is not None:
            on_tile(i0, j0, k0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            C[i0 : i0 + ti, j0 : j0 + tj] = C[i0 : i0 + ti, j0 : j0 + tj] + A[i0 : i0 + ti, k0 : k0 + tk] @ B[k0 : k0 + tk, j0 : j0 + tj]
    return C.astype(out_dtype)


class _Spent(Exception):
    """The budget is used up."""


def _neighbours(cfg: tuple, options: dict[str, list[int]], orders: list[str]) -> list[tuple]:
    out = []
    for d, axis in enumerate("ijk"):
        opts = options[axis]
        p = opts.index(cfg[d])
        for q in (p - 1, p + 1, 0, len(opts) - 1):
            if 0 <= q < len(opts) and q != p:
                out.append(cfg[:d] + (opts[q],) + cfg[d + 1 :])
    out += [(*cfg[:3], o) for o in orders if o != cfg[3]]
    return list(dict.fromkeys(out))


def search(problem: dict, cost: Callable[[int, int, int, str], float], budget: int) -> dict:
    options = {axis: list(problem["tile_options"][axis]) for axis in "ijk"}
    orders = list(problem["orders"])
    space = [(a, b, c, o) for a in options["i"] for b in options["j"] for c in options["k"] for o in orders]
    measured: dict[tuple, float] = {}

    def measure(cfg: tuple) -> None:
        if cfg in measured:
            return
        if len(measured) >= budget:
            raise _Spent
        measured[cfg] = cost(*cfg)

    try:
        if budget >= len(space):
            for cfg in space:
                measure(cfg)
        else:
            rng = random.Random(0)
            for cfg in rng.sample(space, max(1, (budget * 3) // 4)):
                measure(cfg)
            expanded: set[tuple] = set()
            while len(expanded) < len(measured):
                best = min((c for c in measured if c not in expanded), key=measured.__getitem__)
                expanded.add(best)
                for cfg in _neighbours(best, options, orders):
                    measure(cfg)
    except _Spent:
        pass
    best = min(measured, key=measured.__getitem__)
    return {"tiles": list(best[:3]), "order": best[3], "cost": measured[best]}
