"""MISTAKE (an edit of random-then-coordinate): the coordinate sweeps try every power of two from 8 to 128
and the whole dimension on an axis, not the problem's `tile_options`; `cost` refuses a tile that is not an
option (64 or 128 on an axis of 48), and the sweep catches the error and goes on, counting only the calls
that returned a cost. The statement: every call counts, a refused one too.
Oracle (red team round 5): a cost that records every call: 125 calls on a budget of 120, 95 on 90, 12 on 10.
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
        s = {a: v for a, v in zip(order, starts, strict=True)}
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
    refused: set[tuple] = set()
    sweep = [sorted({8, 16, 32, 64, 128, problem[d]}) for d in "MNK"] + [axes[3]]  # every size a tile comes in

    def measure(cfg):
        if cfg not in seen and cfg not in refused and len(seen) < budget:
            try:
                seen[cfg] = cost(*cfg)
            except ValueError:  # not a tile this problem allows: nothing measured
                refused.add(cfg)
        return seen.get(cfg, float("inf"))

    rng = random.Random(2024)
    for cfg in rng.sample(space, min(len(space), max(1, budget // 2))):
        measure(cfg)
    while len(seen) < min(budget, len(space)):
        before = len(seen)
        for axis in range(4):
            best = min(seen, key=seen.get)
            for value in sweep[axis]:
                measure((*best[:axis], value, *best[axis + 1 :]))
        if len(seen) == before:  # converged: spend what is left on unmeasured schedules
            for cfg in rng.sample(space, len(space)):
                measure(cfg)
    best = min(seen, key=seen.get)
    return {"tiles": list(best[:3]), "order": best[3], "cost": seen[best]}
