"""MISTAKE: the refinement's neighbours also halve or double one tile, without checking `tile_options`;
`cost` refuses a schedule outside the space (ValueError), and the search catches that and moves on,
"nothing was measured", counting only the calls that returned a cost. The statement: every call counts,
a refused one too. The search makes `budget` measurements plus every refused call.
Oracle (red team round 5): a cost that records every call: 125 calls on a budget of 120 (112x48x48),
93 on 90 (32x48x80), 12 on 10 (40x24x56).
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
                out.append((*cfg[:d], opts[q], *cfg[d + 1 :]))
        for t in (cfg[d] // 2, cfg[d] * 2):  # halve or double the tile too
            out.append((*cfg[:d], t, *cfg[d + 1 :]))
    out += [(*cfg[:3], o) for o in orders if o != cfg[3]]
    return list(dict.fromkeys(out))


def search(problem: dict, cost: Callable[[int, int, int, str], float], budget: int) -> dict:
    options = {axis: list(problem["tile_options"][axis]) for axis in "ijk"}
    orders = list(problem["orders"])
    space = [(a, b, c, o) for a in options["i"] for b in options["j"] for c in options["k"] for o in orders]
    measured: dict[tuple, float] = {}
    refused: set[tuple] = set()

    def measure(cfg: tuple) -> None:
        if cfg in measured or cfg in refused:
            return
        if len(measured) >= budget:
            raise _Spent
        try:
            measured[cfg] = cost(*cfg)
        except ValueError:  # outside the space: cost refused it, nothing was measured
            refused.add(cfg)

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
