"""Peels the edge tiles: the loop nest first visits every whole tile in the
schedule's order, then the partial tiles at the edges, in a second pass.

Loop peeling is a classic compiler transformation (the main body runs
without bounds checks, a remainder loop handles the tail), and the product
is right: every tile step still happens once. But ``on_tile`` must follow
the order of the schedule's loop nest, where the partial tile of a row of
tiles comes right after its whole tiles. Confirmed against the statement's
loop nest written out as three nested ``for`` loops: on a 7 x 5 x 6 product
with tiles (3, 2, 4) the sequences differ from the third step on, in every
order; where every tile divides its dimension they are identical.

The search is the reference's.
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
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.result_type(A, B))
    size, tile = {"i": M, "j": N, "k": K}, {"i": ti, "j": tj, "k": tk}
    full = {axis: size[axis] - size[axis] % tile[axis] for axis in "ijk"}  # where the partial tile starts
    whole = {axis: range(0, full[axis], tile[axis]) for axis in "ijk"}
    every = {axis: range(0, size[axis], tile[axis]) for axis in "ijk"}
    # The main nest over whole tiles, in the schedule's order...
    steps = list(itertools.product(*(whole[axis] for axis in order)))
    # ...then the remainder: every step that touches a partial tile, in the same order (the mistake: the
    # schedule's loop nest interleaves them with the whole tiles).
    steps += [s for s in itertools.product(*(every[axis] for axis in order)) if any(v >= full[a] for a, v in zip(order, s))]
    for step in steps:
        at = dict(zip(order, step))
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
