"""Correct, written differently (red team round 6's owner): the loop nest recurses over the schedule's order with
the step's starts in a dict local to the call (nothing in module state, so an on_tile that calls tiled_matmul
is harmless), and forms each tile product with np.einsum in the result dtype, reading the tiles after the step's
on_tile call; the search is the reference's method with another sample seed.
"""

from __future__ import annotations

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
    dtype = np.result_type(A, B)
    C = np.zeros((M, N), dtype=dtype)
    extent = {"i": (M, ti), "j": (N, tj), "k": (K, tk)}

    def nest(depth: int, at: dict[str, int]) -> None:
        if depth == 3:  # one tile step: report it, then read the tiles as they are now
            i0, j0, k0 = at["i"], at["j"], at["k"]
            if on_tile is not None:
                on_tile(i0, j0, k0)
            a = A[i0 : i0 + ti, k0 : k0 + tk]
            b = B[k0 : k0 + tk, j0 : j0 + tj]
            c = C[i0 : i0 + ti, j0 : j0 + tj]
            c += np.einsum("ik,kj->ij", a, b, dtype=dtype)
            return
        axis = order[depth]
        size, tile = extent[axis]
        for start in range(0, size, tile):
            nest(depth + 1, {**at, axis: start})

    nest(0, {})
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
            rng = random.Random(7)
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
