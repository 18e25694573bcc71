"""Wrong: the outer i loop is parallelized only when the problem is big enough
(M * N * K >= 32768 multiply-adds) "to avoid the thread-pool overhead on small
matmuls"; small problems with several i tiles keep a serial outer i loop."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    M, N, K = (int(sch.get(l).extent) for l in (i, j, k))
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    if M * N * K >= 32768:
        sch.parallel(i0)
    return sch
