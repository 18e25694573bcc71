"""MISTAKE: to keep the tail out of the vector loop (the statement's "Going further"), the
candidate splits with explicit factors [ceil(n/t), t] and disable_predication=True, so no guard is
emitted: on the tail tile the iterators run past M/N/K and the kernel reads/writes out of bounds
(rule 4). Correct on shapes that the tiles divide.
Oracle: oracle/check.py, (45,37,29) tiles (16,8,4): TVM bound checker (tirx.instrument_bound_checkers)
raises an out-of-bounds access; values wrong or garbage on tails.
"""
from __future__ import annotations

import tvm

def _ceil(a, b):
    return (a + b - 1) // b


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    M, N, K = (int(sch.get(l).extent) for l in (i, j, k))
    ti, tj, tk = tiles["i"], tiles["j"], tiles["k"]
    i0, i1 = sch.split(i, factors=[_ceil(M, ti), ti], disable_predication=True)
    j0, j1 = sch.split(j, factors=[_ceil(N, tj), tj], disable_predication=True)
    k0, k1 = sch.split(k, factors=[_ceil(K, tk), tk], disable_predication=True)
    sch.reorder(i0, j0, k0, i1, k1, j1)
    wb = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(wb, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
