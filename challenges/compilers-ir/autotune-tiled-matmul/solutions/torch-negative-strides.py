"""ONE mistake: tile products run in torch on torch.from_numpy views of the operands.

astype(copy=False) keeps a view when the dtype already matches, and
torch.from_numpy refuses arrays with a negative stride: A[::-1] or B[:, ::-1]
(valid 2-D float64 arrays) raise ValueError instead of giving A @ B.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import numpy as np
import torch


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
    dt = np.result_type(A, B)
    # torch's matmul wants one dtype: promote (no copy when already right), then share memory
    tA = torch.from_numpy(A.astype(dt, copy=False))
    tB = torch.from_numpy(B.astype(dt, copy=False))
    tC = torch.zeros((M, N), dtype=tA.dtype)
    starts = {"i": range(0, M, ti), "j": range(0, N, tj), "k": range(0, K, tk)}
    for step in itertools.product(*(starts[axis] for axis in order)):
        at = dict(zip(order, step, strict=True))
        i0, j0, k0 = at["i"], at["j"], at["k"]
        if on_tile is not None:
            on_tile(i0, j0, k0)
        tC[i0 : i0 + ti, j0 : j0 + tj] += tA[i0 : i0 + ti, k0 : k0 + tk] @ tB[k0 : k0 + tk, j0 : j0 + tj]
    return tC.numpy()


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
