"""Correct, written differently: random sampling, then coordinate sweeps around the best.

Half the budget goes to a seeded random sample of the schedule space; the
rest to sweeps that, from the best schedule so far, try every option of one
axis (or every order) with the others fixed and move to the best. A dict of
measured schedules makes sure no measurement is ever repeated.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import numpy as np


def tiled_matmul(A, B, ti, tj, tk, order="ijk", on_tile=None):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.result_type(A, B))
    bounds = {"i": (M, ti), "j": (N, tj), "k": (K, tk)}
    loops = [range(0, bounds[a][0], bounds[a][1]) for a in order]
    for starts in itertools.product(*loops):
        s = {a: v for a, v in zip(order, starts)}
        i, j, k = s["i"], s["j"], s["k"]
        if on_tile is not None:
            on_tile(i, j, k)
        i1, j1, k1 = min(i + ti, M), min(j + tj, N), min(k + tk, K)
        C[i:i1, j:j1] += A[i:i1, k:k1] @ B[k:k1, j:j1]
    return C


def search(problem: dict, cost: Callable[[int, int, int, str], float], budget: int) -> dict:
    axes = [list(problem["tile_options"][a]) for a in "ijk"] + [list(problem["orders"])]
    space = list(itertools.product(*axes))
    seen: dict[tuple, float] = {}

    def measure(cfg):
        if cfg not in seen and len(seen) < budget:
            seen[cfg] = cost(*cfg)
        return seen.get(cfg, float("inf"))

    rng = random.Random(2024)
    for cfg in rng.sample(space, min(len(space), max(1, budget // 2))):
        measure(cfg)
    while len(seen) < min(budget, len(space)):
        before = len(seen)
        for axis in range(4):
            best = min(seen, key=seen.get)
            for value in axes[axis]:
                measure(best[:axis] + (value,) + best[axis + 1 :])
        if len(seen) == before:  # converged: spend what is left on unmeasured schedules
            for cfg in rng.sample(space, len(space)):
                measure(cfg)
    best = min(seen, key=seen.get)
    return {"tiles": list(best[:3]), "order": best[3], "cost": seen[best]}
