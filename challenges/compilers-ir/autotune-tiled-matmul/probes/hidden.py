"""Hidden probes for autotune-tiled-matmul: they make the score.

``loop-nest`` probes compare ``tiled_matmul`` with numpy's product (auto
check) and the order in which it visits tiles with the reference's.
``search`` probes hand ``search`` a problem and a cost model that counts its
calls and refuses to run past the budget; the check ``search_ok`` (in the
trusted worker) recomputes the cost of the schedule returned with its own
copy of the cost model and compares it with the optimum, found offline by
exhaustive enumeration.
"""

from typing import Any

import numpy as np
from probe_common import ORDERS, randn, search_case, visits
from probekit import probe

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


@probe(category="search", check="search_ok", hints=["budget", "memoize"])
def search_budget_of_one(solution: Any) -> Any:
    """M=64, N=96, K=48, budget 1: the one schedule measured is the answer."""
    return search_case(solution, 64, 96, 48, 48, 1)


@probe(category="search", check="search_ok", hints=["budget"])
def search_budget_covers_space(solution: Any) -> Any:
    """M=16, N=24, K=16 (72 schedules), budget 100: the exact optimum is reachable."""
    return search_case(solution, 16, 24, 16, 16, 100)
