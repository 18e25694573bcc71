"""WRONG (rule 2): skips vectorizing j1 when the matrix has a single column (N == 1),
"nothing to vectorize", although j1 still has extent tj > 1."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    n = int(sch.get(j).extent)  # N, the number of columns of C
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    if n > 1:
        sch.vectorize(j1)
    sch.parallel(i0)
    return sch
