"""Hidden probes for autotune-tiled-matmul: they make the score.

``loop-nest`` probes compare ``tiled_matmul`` with numpy's product (auto
check) and the order in which it visits tiles with the reference's.
``search`` probes hand ``search`` a problem and a cost model that counts its
calls and refuses to run past the budget; the check ``search_ok`` (in the
trusted worker) recomputes the cost of the schedule returned with its own
copy of the cost model and compares it with the optimum, found offline by
exhaustive enumeration.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from probekit import probe

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
    except Exception as exc:  # noqa: BLE001
        obs["error"] = f"search must return {{'tiles': [ti, tj, tk], 'order': str, 'cost': number}}; got {result!r:.200} ({exc})"
    return obs


def randn(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def visits(solution: Any, M: int, N: int, K: int, ti: int, tj: int, tk: int, order: str) -> list[list[int]]:
    seen: list[list[int]] = []
    solution.tiled_matmul(np.ones((M, K)), np.ones((K, N)), ti, tj, tk, order, on_tile=lambda i, j, k: seen.append([int(i), int(j), int(k)]))
    return seen


# ---------------------------------------------------------------- loop-nest


@probe(category="loop-nest", rtol=1e-12, atol=1e-12, hints=["edge-tiles"])
def edges_not_divisible(solution: Any) -> Any:
    """float64 (13 x 7) @ (7 x 11), tiles (4, 3, 5): no tile size divides its dimension."""
    A, B = randn(1, 13, 7), randn(2, 7, 11)
    return solution.tiled_matmul(A, B, 4, 3, 5, "ijk")


@probe(category="loop-nest", rtol=1e-12, atol=1e-12, hints=["edge-tiles", "accumulate"])
def every_order_same_result(solution: Any) -> Any:
    """float64 (10 x 9) @ (9 x 6), tiles (4, 4, 2), in each of the six orders."""
    A, B = randn(3, 10, 9), randn(4, 9, 6)
    return {o: solution.tiled_matmul(A, B, 4, 4, 2, o) for o in ORDERS}


@probe(category="loop-nest", hints=["edge-tiles"])
def tiles_larger_than_matrix(solution: Any) -> Any:
    """Tiles (8, 16, 32) on a (5 x 3) @ (3 x 4) product, and tiles of 1."""
    A, B = randn(5, 5, 3), randn(6, 3, 4)
    return {"big": solution.tiled_matmul(A, B, 8, 16, 32, "kji"), "ones": solution.tiled_matmul(A, B, 1, 1, 1, "jik")}


@probe(category="loop-nest", hints=["accumulate"])
def integer_and_float32_dtypes(solution: Any) -> Any:
    """int64 operands give the exact int64 product; float32 operands give float32."""
    rng = np.random.default_rng(7)
    Ai, Bi = rng.integers(-50, 50, (9, 12)), rng.integers(-50, 50, (12, 7))
    Af, Bf = randn(8, 6, 10).astype(np.float32), randn(9, 10, 5).astype(np.float32)
    got_i = solution.tiled_matmul(Ai, Bi, 4, 4, 5, "kij")
    got_f = solution.tiled_matmul(Af, Bf, 4, 2, 3, "ikj")
    return {"int64": got_i, "int64_exact": bool(np.array_equal(got_i, Ai @ Bi)), "float32": got_f}


@probe(category="loop-nest", weight=2, hints=["loop-order"])
def tile_visit_order(solution: Any) -> Any:
    """The (i0, j0, k0) of every tile step, in order, for orders "kij" and "jki" on a (6 x 4) @ (4 x 6) product."""
    return {o: visits(solution, 6, 6, 4, 2, 3, 2, o) for o in ("kij", "jki")}


# ---------------------------------------------------------------- search


@probe(category="search", check="search_ok", hints=["measure", "full-space"])
def search_tall_a(solution: Any) -> Any:
    """M=112, N=48, K=48, budget 120."""
    return search_case(solution, 112, 48, 48, 96, 120)


@probe(category="search", check="search_ok", hints=["measure", "full-space"])
def search_small_cache(solution: Any) -> Any:
    """M=32, N=64, K=96, budget 90."""
    return search_case(solution, 32, 64, 96, 32, 90)


@probe(category="search", check="search_ok", hints=["measure", "full-space"])
def search_large_cache(solution: Any) -> Any:
    """M=48, N=64, K=64, budget 96."""
    return search_case(solution, 48, 64, 64, 384, 96)


@probe(category="search", check="search_ok", hints=["measure", "full-space"])
def search_wide_c(solution: Any) -> Any:
    """M=32, N=48, K=80, budget 90."""
    return search_case(solution, 32, 48, 80, 96, 90)


@probe(category="search", check="search_ok", hints=["measure", "full-space"])
def search_deep_k(solution: Any) -> Any:
    """M=96, N=32, K=80, budget 112."""
    return search_case(solution, 96, 32, 80, 32, 112)


@probe(category="search", check="search_ok", hints=["measure", "full-space"])
def search_mid_cache(solution: Any) -> Any:
    """M=64, N=48, K=80, budget 120."""
    return search_case(solution, 64, 48, 80, 96, 120)


@probe(category="search", check="search_ok", hints=["measure", "full-space"])
def search_big_cache_flat(solution: Any) -> Any:
    """M=96, N=64, K=48, budget 120."""
    return search_case(solution, 96, 64, 48, 256, 120)


@probe(category="search", check="search_ok", hints=["budget", "memoize"])
def search_tiny_budget(solution: Any) -> Any:
    """M=96, N=48, K=32, budget 10: return the best schedule measured."""
    return search_case(solution, 96, 48, 32, 32, 10)


@probe(category="search", check="search_ok", hints=["budget"])
def search_budget_covers_space(solution: Any) -> Any:
    """M=16, N=24, K=16 (72 schedules), budget 100: the exact optimum is reachable."""
    return search_case(solution, 16, 24, 16, 16, 100)
