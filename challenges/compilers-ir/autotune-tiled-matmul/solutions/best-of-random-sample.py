"""Returns the best schedule of the random sample, forgetting the refinement.

The search samples three quarters of its budget at random, then refines
around the best schedules, but the answer is taken from the sample alone:
whatever the refinement found is measured (and paid for) and thrown away.
On the statement's larger problems the sample usually holds a schedule as
good as anything the refinement finds, so it passes those. Confirmed outside
the grader with a cost function that records every call: with budgets of 10
and less the refinement often measures a strictly cheaper schedule than the
sample's best (on 8 of 24 small generated problems, and on the budget-10
problem), and the search returns the worse one. The statement: the schedule
returned is the best of those measured.

Otherwise as the reference.
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
    options = {axis: list(problem["tile_options"][axis]) for axis in "ijk"}
    orders = list(problem["orders"])
    space = [(a, b, c, o) for a in options["i"] for b in options["j"] for c in options["k"] for o in orders]
    measured: dict[tuple, float] = {}
    sampled: list[tuple] = []

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
            sampled = list(measured)
            expanded: set[tuple] = set()
            while len(expanded) < len(measured):
                best = min((c for c in measured if c not in expanded), key=measured.__getitem__)
                expanded.add(best)
                for cfg in _neighbours(best, options, orders):
                    measure(cfg)
    except _Spent:
        pass
    # The mistake: the answer comes from the random sample only (all of the space when the budget covers it).
    best = min(sampled or measured, key=measured.__getitem__)
    return {"tiles": list(best[:3]), "order": best[3], "cost": measured[best]}
