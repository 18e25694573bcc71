"""MISTAKE: measurements are memoised across calls of search in a module-level table keyed by the
problem's shape (M, N, K) and the schedule, "so that a schedule measured once never costs budget
again". But the cost also depends on the cache size, which is hidden and differs between
problems: a second search on a same-shaped problem with another cache reuses stale costs, returns
a schedule it never measured this time, and reports a cost that is not this cost model's.
Oracle (red team round 2): 48x32x40 with caches of 32, then 256, then 128 lines (budget 30): the last search returns (16, 32, 40, 'jik') at cost 592, never measured in that call; its true cost is 8112.
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


_MEMO: dict = {}  # ((M, N, K), schedule) -> misses, kept across searches


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
    shape = (problem["M"], problem["N"], problem["K"])
    measured: dict[tuple, float] = {cfg: c for (sh, cfg), c in _MEMO.items() if sh == shape}
    n_calls = 0

    def measure(cfg: tuple) -> None:
        nonlocal n_calls
        if cfg in measured:
            return
        if n_calls >= budget:
            raise _Spent
        n_calls += 1
        measured[cfg] = _MEMO[shape, cfg] = cost(*cfg)

    try:
        if budget >= len([c for c in space if c not in measured]):
            for cfg in space:
                measure(cfg)
        else:
            rng = random.Random(0)
            fresh = [c for c in space if c not in measured]
            for cfg in rng.sample(fresh, max(1, (budget * 3) // 4)):
                measure(cfg)
            expanded: set[tuple] = set()
            while n_calls < budget and len(expanded) < len(measured):
                best = min((c for c in measured if c not in expanded), key=measured.__getitem__)
                expanded.add(best)
                for cfg in _neighbours(best, options, orders):
                    measure(cfg)
    except _Spent:
        pass
    best = min(measured, key=measured.__getitem__)
    return {"tiles": list(best[:3]), "order": best[3], "cost": measured[best]}
