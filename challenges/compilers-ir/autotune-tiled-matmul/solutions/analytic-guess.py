"""Guesses the schedule from a rule of thumb instead of measuring.

The largest square tile whose A, B and C tiles fit a 32 KiB L1 cache (512
lines): 3 t^2 / 8 <= 512 gives t = 32, in the textbook order "ijk". It calls
the cost model once, to report the cost. The caches and shapes of the
problems are not the ones the rule assumes, and the best tiles are rarely
square.

Otherwise as the reference: the tiled loop nest, and a budgeted search over schedules.

``tiled_matmul`` runs three tile loops in the schedule's order (outermost
first) and clips edge tiles with slicing, so any tile size works for any
shape. ``search`` spends its budget on measurements, never twice on the
same schedule: three quarters on a seeded random sample of the whole space
(the cost landscape has cliffs where a working set stops fitting the cache,
which trap a local search started in the wrong place), the rest on
best-first refinement around the best schedules found.
"""

from __future__ import annotations

import itertools
import random
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
    C = np.zeros((M, N), dtype=np.result_type(A, B))
    starts = {"i": range(0, M, ti), "j": range(0, N, tj), "k": range(0, K, tk)}
    for step in itertools.product(*(starts[axis] for axis in order)):
        at = dict(zip(order, step, strict=True))
        i0, j0, k0 = at["i"], at["j"], at["k"]
        if on_tile is not None:
            on_tile(i0, j0, k0)
        C[i0 : i0 + ti, j0 : j0 + tj] += A[i0 : i0 + ti, k0 : k0 + tk] @ B[k0 : k0 + tk, j0 : j0 + tj]
    return C


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
    options = problem["tile_options"]
    t = 8
    while 3 * (2 * t) ** 2 / 8 <= 512:
        t *= 2

    def clip(axis: str) -> int:
        fitting = [o for o in options[axis] if o <= t]
        return max(fitting) if fitting else min(options[axis])

    tiles = [clip("i"), clip("j"), clip("k")]
    return {"tiles": tiles, "order": "ijk", "cost": cost(*tiles, "ijk")}
