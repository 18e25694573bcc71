"""A uniform random sample of the budget (a fine search on this cost model),
but the running minimum forgets to update its cost.

``best_cost`` keeps the cost of the first schedule measured, so ``best``
ends as the *last* schedule cheaper than the first one, not the cheapest.
When the first sample happens to be expensive, that is almost any
schedule. Confirmed outside the grader with a cost function that records
every call: the schedule returned is not the cheapest one recorded on most
problems, and on the public 32-cube it costs well over 5% more than the
exhaustive optimum.

The loop nest is the reference's.
"""

from __future__ import annotations

import itertools
import math
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


def search(problem: dict, cost: Callable[[int, int, int, str], float], budget: int) -> dict:
    options = [list(problem["tile_options"][axis]) for axis in "ijk"]
    space = list(itertools.product(*options, problem["orders"]))
    measured: dict[tuple, float] = {}
    best, best_cost = None, math.inf
    for cfg in random.Random(0).sample(space, min(budget, len(space))):
        measured[cfg] = cost(*cfg)
        if best is None:
            best, best_cost = cfg, measured[cfg]
        elif measured[cfg] < best_cost:
            best = cfg  # the mistake: best_cost is not updated with it
    return {"tiles": list(best[:3]), "order": best[3], "cost": measured[best]}
