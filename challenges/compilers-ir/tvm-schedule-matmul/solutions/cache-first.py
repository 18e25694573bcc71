"""Right (alternative): cache first, then tile. The write cache is created on the
naive nest, the loops are split with explicit outer factors ceil(n / t), the copy is
moved under j0, the zeroing is hoisted out of the k loops (decompose_reduction at k0)
and vectorized, a short k1 is unrolled, the copy's inner loop is vectorized, and the cache
lives in "global" scope."""

from __future__ import annotations

import tvm


def _ceil(n: int, t: int) -> int:
    return -(-n // t)


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    update = sch.get_sblock("C")
    copy = sch.cache_write(update, 0, "global")
    i, j, k = sch.get_loops(update)
    M, N, K = (int(sch.get(l).extent) for l in (i, j, k))
    ti, tj, tk = int(tiles["i"]), int(tiles["j"]), int(tiles["k"])
    i0, i1 = sch.split(i, factors=[_ceil(M, ti), ti])
    j0, j1 = sch.split(j, factors=[_ceil(N, tj), tj])
    k0, k1 = sch.split(k, factors=[_ceil(K, tk), tk])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.reverse_compute_at(copy, j0)
    sch.parallel(i0)
    sch.vectorize(j1)
    if tk <= 8:  # unroll short reduction tiles only (compile time)
        sch.unroll(k1)
    init = sch.decompose_reduction(update, k0)
    # Vectorize the innermost loop of the zeroing and of the copy, but only a loop of
    # their own (unit loops are dropped, so the innermost may be a shared tile loop).
    for blk in (init, copy):
        inner = sch.get_loops(blk)[-1]
        shared = [sch.get_sref(l) for l in sch.get_loops(update)]
        if not any(sch.get_sref(inner).same_as(s) for s in shared):
            sch.vectorize(inner)
    return sch
