"""Simulated annealing that returns its current state instead of the best
schedule it measured.

Annealing accepts a worse neighbour with a probability that falls with the
temperature; once cool, the current state usually sits in a good valley, so
returning it "works" on many problems. But an uphill move accepted late
leaves the current state worse than a schedule seen earlier. Confirmed
outside the grader with a cost function that records every call: on the
statement's example (M=64, N=48, K=80, 96 lines, budget 120) it returns a
schedule costing 4960 after measuring one costing 3552 (1.40x; the
exhaustive optimum is 3552), and on 6 of 24 small generated problems the
state returned is not the cheapest one measured. The statement: the
schedule returned is the best of those measured.

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
    options = [list(problem["tile_options"][axis]) for axis in "ijk"] + [list(problem["orders"])]
    space = list(itertools.product(*options))
    measured: dict[tuple, float] = {}

    def measure(cfg: tuple) -> float:
        if cfg not in measured:
            measured[cfg] = cost(*cfg)
        return measured[cfg]

    if budget >= len(space):
        for cfg in space:
            measure(cfg)
        best = min(measured, key=measured.__getitem__)
        return {"tiles": list(best[:3]), "order": best[3], "cost": measured[best]}
    rng = random.Random(0)
    current = rng.choice(space)
    current_cost = measure(current)
    temperature = 0.2 * current_cost
    for _ in range(100_000):  # a bound on the steps that revisit measured schedules
        if len(measured) >= budget:
            break
        axis = rng.randrange(4)
        candidate = current[:axis] + (rng.choice(options[axis]),) + current[axis + 1 :]
        c = measure(candidate)
        if c <= current_cost or rng.random() < math.exp(-(c - current_cost) / max(temperature, 1e-9)):
            current, current_cost = candidate, c
        temperature *= 0.95
    # The mistake: the annealer's current state, not the best schedule it measured.
    return {"tiles": list(current[:3]), "order": current[3], "cost": current_cost}
