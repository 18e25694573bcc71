"""Tiled matmul and a budgeted schedule search against a cache model.

Write ``tiled_matmul`` (the loop nest for a given schedule) and ``search``
(the best schedule you can find within a budget of cost-model calls). The
cost model below is the one the grader uses, for your local experiments:
in the graded runs ``search`` gets it as ``cost(ti, tj, tk, order)``, with
a cache size you are not told. The version below is a first attempt.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import numpy as np

# ---------------------------------------------------------------- the cost model
LINE = 8  # float64 elements per cache line (64 bytes)
ORDERS = ("ijk", "ikj", "jik", "jki", "kij", "kji")


def tile_options(dim: int) -> list[int]:
    """Tile sizes a schedule may use along a dimension of size ``dim``: powers of two from 8 below dim, and dim."""
    return [t for t in (8, 16, 32, 64, 128) if t < dim] + [dim]


def cache_misses(M: int, N: int, K: int, ti: int, tj: int, tk: int, order: str, cache_lines: int) -> int:
    """Misses of a fully associative LRU cache of ``cache_lines`` lines on the tiled matmul's trace.

    A (M x K), B (K x N) and C (M x N) are row-major float64 arrays laid out one
    after another in memory. The three tile loops run in ``order`` (outermost
    first). Each tile step (i0, j0, k0) runs a micro-kernel that, for each row
    r of its C tile, touches the lines of A[r, k0:k0+tk], then the lines of
    every row of the B tile B[k0:k0+tk, j0:j0+tj], then the lines of
    C[r, j0:j0+tj]. Edge tiles are clipped at the matrix bounds.
    """
    a_base, b_base, c_base = 0, M * K, M * K + K * N

    def lines(base: int, row_len: int, r: int, c0: int, c1: int) -> tuple[int, ...]:
        return tuple(range((base + r * row_len + c0) // LINE, (base + r * row_len + c1 - 1) // LINE + 1))

    starts = {"i": range(0, M, ti), "j": range(0, N, tj), "k": range(0, K, tk)}
    b_tiles = {
        (k0, j0): tuple(ln for r in range(k0, min(k0 + tk, K)) for ln in lines(b_base, N, r, j0, min(j0 + tj, N)))
        for k0 in starts["k"]
        for j0 in starts["j"]
    }
    where = [order.index(axis) for axis in "ijk"]
    lru: dict[int, None] = {}  # insertion order is recency order: first key = least recently used
    misses = 0
    for step in itertools.product(*(starts[axis] for axis in order)):
        i0, j0, k0 = step[where[0]], step[where[1]], step[where[2]]
        b_tile = b_tiles[k0, j0]
        k1, j1 = min(k0 + tk, K), min(j0 + tj, N)
        for r in range(i0, min(i0 + ti, M)):
            for ln in lines(a_base, K, r, k0, k1) + b_tile + lines(c_base, N, r, j0, j1):
                if ln in lru:
                    del lru[ln]
                else:
                    misses += 1
                    if len(lru) >= cache_lines:
                        del lru[next(iter(lru))]
                lru[ln] = None
    return misses


# ---------------------------------------------------------------- your code


def _steps(M, N, K, ti, tj, tk, order):
    """Tile starts (i0, j0, k0) in loop-nest order, from a flat step counter (mixed-radix digits)."""
    count = {"i": -(-M // ti), "j": -(-N // tj), "k": -(-K // tk)}
    size = {"i": ti, "j": tj, "k": tk}
    radices = [count[axis] for axis in order]
    total = radices[0] * radices[1] * radices[2]
    for flat in range(total):
        digits = {}
        rest = flat
        for axis, radix in zip(reversed(order), reversed(radices)):
            rest, d = divmod(rest, radix)
            digits[axis] = d * size[axis]
        yield digits["i"], digits["j"], digits["k"]


_CHUNK = 1 << 20  # elements of one broadcast product


def tiled_matmul(A, B, ti, tj, tk, order="ijk", on_tile=None):
    """C = A @ B tile by tile; each tile step is an explicit sum of elementwise products in the result dtype."""
    M, K = A.shape
    K2, N = B.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {A.shape} @ {B.shape}")
    if sorted(order) != ["i", "j", "k"]:
        raise ValueError(f"order must be a permutation of 'ijk', got {order!r}")
    rt = np.result_type(A, B)
    C = np.zeros((M, N), dtype=rt)
    for i0, j0, k0 in _steps(M, N, K, ti, tj, tk, order):
        if on_tile is not None:
            on_tile(i0, j0, k0)
        i1, j1, k1 = min(i0 + ti, M), min(j0 + tj, N), min(k0 + tk, K)
        rows, cols = i1 - i0, j1 - j0
        kc = max(1, _CHUNK // max(1, rows * cols))
        for ka in range(k0, k1, kc):
            kb = min(ka + kc, k1)
            a = A[i0:i1, ka:kb].astype(rt)
            b = B[ka:kb, j0:j1].astype(rt)
            C[i0:i1, j0:j1] += (a[:, :, None] * b[None, :, :]).sum(axis=1, dtype=rt)
    return C


class _Out(Exception):
    """No calls of cost left."""


def search(problem: dict, cost: Callable[[int, int, int, str], float], budget: int) -> dict:
    """A stratified sample, then coordinate descent with exhaustive line searches from the best points."""
    dims = [list(problem["tile_options"][axis]) for axis in "ijk"] + [list(problem["orders"])]
    space = list(itertools.product(*dims))
    seen = {}
    left = [budget]

    def f(cfg):
        if cfg not in seen:
            if left[0] <= 0:
                raise _Out
            left[0] -= 1
            seen[cfg] = cost(*cfg)
        return seen[cfg]

    try:
        if budget >= len(space):
            for cfg in space:
                f(cfg)
        else:
            rng = random.Random(2024)
            # a stratified design: every order and every tile size of each axis appears about
            # equally often (a Latin-hypercube-like sample), before any local refinement
            n = max(1, budget * 3 // 5)
            cols = []
            for values in dims:
                col = [values[t % len(values)] for t in range(n)]
                rng.shuffle(col)
                cols.append(col)
            for cfg in zip(*cols):
                f(cfg)
            started = set()
            while True:
                fresh = [c for c in seen if c not in started]
                if not fresh:
                    fresh = [c for c in space if c not in seen]
                    if not fresh:
                        break
                    fresh = [rng.choice(fresh)]
                x = min(fresh, key=lambda c: seen.get(c, float("inf")))
                started.add(x)
                f(x)
                improved = True
                while improved:
                    improved = False
                    for d in rng.sample(range(4), 4):
                        line = [x[:d] + (v,) + x[d + 1 :] for v in dims[d]]
                        for c in line:
                            f(c)
                        y = min(line, key=seen.__getitem__)
                        if seen[y] < seen[x]:
                            x, improved = y, True
                            started.add(x)
    except _Out:
        pass
    best = min(seen, key=seen.__getitem__)
    return {"tiles": list(best[:3]), "order": best[3], "cost": seen[best]}
