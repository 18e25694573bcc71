"""Tiled matmul and a schedule search against a cache model.

Write ``tiled_matmul`` (the loop nest for a given schedule) and ``search``
(the best schedule you can find within a budget of cost-model calls). The
cost model below is the one the grader uses, for your local experiments:
in the graded runs ``search`` gets it as ``cost(ti, tj, tk, order)``, with
a cache size you are not told. The version below is a first attempt.
"""

from __future__ import annotations

import itertools
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


def tiled_matmul(A, B, ti, tj, tk, order="ijk", on_tile=None):
    """C = A @ B computed tile by tile, the three tile loops in ``order`` (outermost first)."""
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=A.dtype)
    for i in range(M // ti):
        for j in range(N // tj):
            for k in range(K // tk):
                i0, j0, k0 = i * ti, j * tj, k * tk
                if on_tile is not None:
                    on_tile(i0, j0, k0)
                C[i0 : i0 + ti, j0 : j0 + tj] += A[i0 : i0 + ti, k0 : k0 + tk] @ B[k0 : k0 + tk, j0 : j0 + tj]
    return C


def search(problem: dict, cost: Callable[[int, int, int, str], float], budget: int) -> dict:
    """The best schedule found with at most ``budget`` calls of ``cost``."""
    options = problem["tile_options"]
    tiles = [min(32, max(options[a])) if 32 in options[a] else max(options[a]) for a in "ijk"]
    return {"tiles": tiles, "order": "ijk", "cost": cost(*tiles, "ijk")}
