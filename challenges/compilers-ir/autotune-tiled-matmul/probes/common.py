"""What the public and hidden probes of autotune-tiled-matmul share, imported by both as ``probe_common``."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

# ---------------------------------------------------------------- the cost model (as in the statement)
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


class BudgetExceeded(Exception):
    """The search called the cost model more often than its budget allows."""


def problem_for(M: int, N: int, K: int) -> dict[str, Any]:
    return {
        "M": M, "N": N, "K": K,
        "tile_options": {"i": tile_options(M), "j": tile_options(N), "k": tile_options(K)},
        "orders": list(ORDERS),
    }  # fmt: skip


def search_case(solution: Any, M: int, N: int, K: int, cache_lines: int, budget: int) -> dict[str, Any]:
    """Run the candidate's search against a counting cost model; the check judges the result."""
    problem = problem_for(M, N, K)
    measured: list[list[Any]] = []

    def cost(ti: int, tj: int, tk: int, order: str) -> int:
        if len(measured) >= budget:
            measured.append([ti, tj, tk, order, None])
            raise BudgetExceeded(f"the cost model was called more than budget={budget} times")
        for value, axis in ((ti, "i"), (tj, "j"), (tk, "k")):
            if value not in problem["tile_options"][axis]:
                raise ValueError(f"tile size {value!r} is not an option for axis {axis}: {problem['tile_options'][axis]}")
        if order not in ORDERS:
            raise ValueError(f"order {order!r} is not one of {ORDERS}")
        misses = cache_misses(M, N, K, ti, tj, tk, order, cache_lines)
        measured.append([ti, tj, tk, order, misses])
        return misses

    obs: dict[str, Any] = {"problem": [M, N, K, cache_lines], "budget": budget}
    try:
        result = solution.search({**problem, "tile_options": {k: list(v) for k, v in problem["tile_options"].items()}}, cost, budget)
    except BudgetExceeded as exc:
        obs["error"] = str(exc)
        return obs
    except Exception as exc:  # noqa: BLE001 - reported by the check
        obs["error"] = f"search raised {type(exc).__name__}: {str(exc)[:300]}"
        return obs
    obs["calls"] = len(measured)
    obs["best_measured"] = min((m[4] for m in measured if m[4] is not None), default=None)
    try:
        tiles = [int(t) for t in result["tiles"]]
        obs["config"] = [*tiles, str(result["order"])]
        obs["claimed"] = float(result["cost"])
        # The schedule returned must be one this call measured (not one remembered from an earlier search).
        this_call = {(int(m[0]), int(m[1]), int(m[2]), str(m[3])) for m in measured if m[4] is not None}
        obs["measured_here"] = (*tiles, str(result["order"])) in this_call
    except Exception as exc:  # noqa: BLE001
        obs["error"] = f"search must return {{'tiles': [ti, tj, tk], 'order': str, 'cost': number}}; got {result!r:.200} ({exc})"
    return obs


def randn(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def zero_blocks(seed: int, M: int, N: int, K: int, ti: int, tj: int, tk: int) -> tuple[np.ndarray, np.ndarray]:
    """Random operands in which some whole tiles are zero: a k-tile column band of A, one tile of A, a k-tile row
    band of B and one tile of B (what a "skip the tiles of zeros" shortcut would skip)."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    ks, iz, jz = range(0, K, tk), range(0, M, ti), range(0, N, tj)
    A[:, ks[0] : ks[0] + tk] = 0.0
    A[iz[-1] : iz[-1] + ti, ks[-1] : ks[-1] + tk] = 0.0
    B[ks[-1] : ks[-1] + tk, :] = 0.0
    B[ks[0] : ks[0] + tk, jz[-1] : jz[-1] + tj] = 0.0
    return A, B


def visits(
    solution: Any, M: int, N: int, K: int, ti: int, tj: int, tk: int, order: str, operands: tuple[np.ndarray, np.ndarray] | None = None
) -> list[list[int]]:
    """The (i0, j0, k0) of every tile step, in order (operands of ones unless given)."""
    A, B = operands if operands is not None else (np.ones((M, K)), np.ones((K, N)))
    seen: list[list[int]] = []
    solution.tiled_matmul(A, B, ti, tj, tk, order, on_tile=lambda i, j, k: seen.append([int(i), int(j), int(k)]))
    return seen
