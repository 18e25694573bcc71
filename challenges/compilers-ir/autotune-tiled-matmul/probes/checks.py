"""Custom check for autotune-tiled-matmul's search probes, run in the trusted worker.

The worker never trusts the cost the sandbox reports: it recomputes the cost
of the returned schedule with its own copy of the cost model (below,
identical to the probes' and the statement's) and compares it with the
optimum of the whole schedule space. The optima were found by exhaustive
enumeration of every schedule (``exhaustive_optimum`` below, run offline:
about 2-4 s per problem) and are stored in ``OPTIMA``. On every search the
schedule returned must also be the best one the search measured (the probe
counts every call and keeps the costs it returned), measured in this very call
(``measured_here``: not remembered from an earlier search). A problem whose optimum
is ``None`` is a tiny-budget probe, judged by that rule alone; a budget that
covers the whole space must find the optimum itself. ``searches_ok`` judges
hidden.py's generated families of small problems the same way, and
``searches_near_optimum`` a run of several searches, each against its own
optimum (``SAME_SHAPE_OPTIMA``).
"""

from __future__ import annotations

import itertools
from typing import Any

from grader.checks import CheckResult

TOLERANCE = 0.05

# (M, N, K, cache_lines) -> the fewest misses of any schedule in the space.
OPTIMA: dict[tuple[int, int, int, int], int | None] = {
    (112, 48, 48, 96): 3648,
    (32, 64, 96, 32): 5376,
    (48, 64, 64, 384): 1664,
    (32, 48, 80, 96): 2016,
    (96, 32, 80, 32): 6080,
    (64, 48, 80, 96): 3552,
    (96, 64, 48, 256): 2304,
    (96, 48, 32, 32): None,  # budget 10: judged against what the search measured
    (64, 96, 48, 48): None,  # budget 1: likewise
    (16, 24, 16, 16): 240,
    (64, 64, 64, 64): 4608,
    (32, 32, 32, 32): 896,
    # searches_budget_covers_space (hidden.py's generated problems, seed 2703): budget and space size noted
    (22, 21, 23, 24): 789,  # budget 163, space 162
    (26, 13, 32, 24): 328,  # budget 108, space 108
    (15, 18, 11, 128): 80,  # budget 122, space 72
    (9, 18, 9, 48): 51,  # budget 72, space 72
    (21, 14, 12, 128): 90,  # budget 140, space 72
    (16, 26, 13, 96): 121,  # budget 73, space 72
    # searches_same_shape_other_caches: the same shape on another cache (budget 72, space 72)
    (16, 24, 16, 64): 128,
}

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


def exhaustive_optimum(M: int, N: int, K: int, cache_lines: int) -> int:
    """The optimum over the whole space (offline only: too slow to run for every submission)."""
    return min(
        cache_misses(M, N, K, a, b, c, o, cache_lines)
        for a in tile_options(M)
        for b in tile_options(N)
        for c in tile_options(K)
        for o in ORDERS
    )


def space_size(M: int, N: int, K: int) -> int:
    return len(tile_options(M)) * len(tile_options(N)) * len(tile_options(K)) * len(ORDERS)


def _judge(actual: Any, expected: Any, optimum: int | None) -> tuple[bool, str]:
    """One search run: within its budget, a schedule of the space with its true cost, the best it measured, and
    (when ``optimum`` is given) within 5% of the optimum of the whole space, or the optimum itself when the budget
    covers the space."""
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed"
    M, N, K, cache_lines = expected["problem"]
    budget = expected["budget"]
    if "error" in actual:
        return False, str(actual["error"])
    calls = actual.get("calls")
    if not isinstance(calls, int) or calls > budget:
        return False, f"search called the cost model {calls} times; the budget is {budget}"
    config = actual.get("config")
    if not (isinstance(config, list) and len(config) == 4):
        return False, "search returned no schedule"
    ti, tj, tk, order = config
    for value, dim, axis in ((ti, M, "i"), (tj, N, "j"), (tk, K, "k")):
        if value not in tile_options(dim):
            return False, f"tile size {value} is not an option for axis {axis} (options {tile_options(dim)})"
    if order not in ORDERS:
        return False, f"order {order!r} is not one of {list(ORDERS)}"
    cost = cache_misses(M, N, K, ti, tj, tk, order, cache_lines)
    claimed = actual.get("claimed")
    if claimed != cost:
        return False, f"search reported cost {claimed} for tiles ({ti}, {tj}, {tk}) order {order!r}, which costs {cost}"
    if actual.get("measured_here") is not True:
        # The statement: each call stands alone; the schedule returned is one this call measured with its cost.
        return False, (
            f"search returned tiles ({ti}, {tj}, {tk}) order {order!r}, which it did not measure in this call "
            f"({calls} of {budget} calls used): return a schedule this call measured, with the cost its cost returned"
        )
    best = actual.get("best_measured")
    if cost != best:
        # The statement: the schedule returned is the best one the search measured (any of them on a tie).
        return False, (
            f"with {calls} of {budget} calls, search returned tiles ({ti}, {tj}, {tk}) order {order!r}, costing {cost}, "
            f"but it measured a schedule costing {best}: return the best schedule measured"
        )
    if optimum is None:
        return True, f"returned the best of the {calls} schedule(s) it measured ({cost} misses)"
    exact = budget >= space_size(M, N, K)
    if cost > (1 + TOLERANCE) * optimum or (exact and cost != optimum):
        return False, (
            f"the schedule found, tiles ({ti}, {tj}, {tk}) order {order!r}, costs {cost} misses, "
            f"{cost / optimum:.2f}x the optimum; it must be "
            + ("the optimum: the budget covers the whole space" if exact else f"within {TOLERANCE:.0%}")
            + f" ({calls} of {budget} calls used)"
        )
    return True, f"{cost} misses, {cost / optimum:.3f}x the optimum, with {calls} of {budget} calls"


def search_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    optimum = OPTIMA.get(tuple(expected["problem"]), "unknown")
    if optimum == "unknown":
        return False, f"no optimum is stored for problem {expected['problem']}"  # a package bug, not the candidate's
    return _judge(actual, expected, optimum)


def searches_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """A family of generated searches (small problems, budgets from 2 to more than the space): each must return
    the best schedule it measured, within its budget, with its true cost; a budget that covers the space must
    find the optimum (stored in OPTIMA, or enumerated here for a problem not stored: at most 384 small schedules)."""
    cases = expected["cases"]
    if not isinstance(actual, dict) or not isinstance(actual.get("cases"), list) or len(actual["cases"]) != len(cases):
        return False, "the probe's observation is malformed"
    for index, (got, want) in enumerate(zip(actual["cases"], cases, strict=True)):
        M, N, K, lines = want["problem"]
        optimum = None
        if want["budget"] >= space_size(M, N, K):
            stored = OPTIMA.get((M, N, K, lines))
            optimum = stored if stored is not None else exhaustive_optimum(M, N, K, lines)
        ok, message = _judge(got, want, optimum)
        if not ok:
            return False, f"case {index + 1} of {len(cases)} (M={M}, N={N}, K={K}, budget {want['budget']}): {message}"
    return True, f"all {len(cases)} searches returned the best schedule they measured"


# same_shape_small_cache_after_large_* (red team round 5): each shape on a large cache (budget: a third of the space) and
# on 32 lines (budget: a quarter), by exhaustive_optimum offline.
SAME_SHAPE_OPTIMA: dict[tuple[int, int, int, int], int] = {
    (40, 40, 40, 256): 600,
    (40, 40, 40, 32): 1800,
    (64, 40, 40, 256): 840,
    (64, 40, 40, 32): 2760,
    (96, 32, 48, 256): 1152,
    (96, 32, 48, 32): 3648,
}


def _reason(message: str) -> str:
    """A short name for the way _judge failed a search (the diagnosis tells mistakes apart by it)."""
    for needle, reason in (
        ("the budget is", "over-budget"),
        ("more than budget", "over-budget"),
        ("did not measure in this call", "not-measured-here"),
        ("but it measured a schedule costing", "not-best-measured"),
        ("x the optimum", "far-from-optimum"),
        ("search reported cost", "cost-misreported"),
        ("search raised", "raised"),
    ):
        if needle in message:
            return reason
    return "malformed"


def searches_every_call_counted(actual: Any, expected: Any) -> CheckResult:
    """searches_ok on a run whose probe counted every call of cost (a refused one included), with a reason."""
    ok, message = searches_ok(actual, expected)
    return CheckResult(True, message) if ok else CheckResult(False, message, {"reason": _reason(message)})


def searches_near_optimum(actual: Any, expected: Any) -> CheckResult:
    """Several searches in one run, each judged alone against its own problem's optimum (SAME_SHAPE_OPTIMA): within its
    budget, the best schedule it measured in that call, and within 5% of the optimum (the optimum itself when the budget
    covers the space). A search that starts from an earlier call's answer on the same shape fails where that answer is
    far from the new cache's optimum."""
    cases = expected["cases"]
    if not isinstance(actual, dict) or not isinstance(actual.get("cases"), list) or len(actual["cases"]) != len(cases):
        return CheckResult(False, "the probe's observation is malformed", {"reason": "malformed"})
    for index, (got, want) in enumerate(zip(actual["cases"], cases, strict=True)):
        M, N, K, lines = want["problem"]
        optimum = SAME_SHAPE_OPTIMA.get((M, N, K, lines))
        if optimum is None:  # a package bug, not the candidate's
            return CheckResult(False, f"no optimum is stored for problem {want['problem']}", {"reason": "no-optimum"})
        ok, message = _judge(got, want, optimum)
        if not ok:
            where = f"search {index + 1} of {len(cases)} (M={M}, N={N}, K={K}, budget {want['budget']})"
            return CheckResult(False, f"{where}: {message}", {"reason": _reason(message)})
    return CheckResult(True, f"all {len(cases)} searches within {TOLERANCE:.0%} of their own optimum")


# search_half_budget_* (red team round 6): half the space as the budget, where a sample cut short ends on a plateau; the
# optima by exhaustive_optimum offline.
HALF_BUDGET_OPTIMA: dict[tuple[int, int, int, int], int] = {
    (80, 48, 48, 64): 3168,
    (72, 40, 80, 64): 4360,
}


def search_half_budget_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """search_ok against HALF_BUDGET_OPTIMA: within the budget, the best schedule measured, within 5% of the optimum."""
    optimum = HALF_BUDGET_OPTIMA.get(tuple(expected["problem"]))
    if optimum is None:
        return False, f"no optimum is stored for problem {expected['problem']}"  # a package bug, not the candidate's
    return _judge(actual, expected, optimum)
