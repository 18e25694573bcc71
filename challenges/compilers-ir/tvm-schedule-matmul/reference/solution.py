"""Reference: the blocked, vectorized, parallel matmul schedule with a write cache.

Split each loop by its tile with ``factors=[None, t]`` so that TVM computes
the outer extent (ceil(n / t)) and guards the tail with a predicate; order
the loops i0, j0, k0, i1, k1, j1; accumulate a tile in a local buffer
(``cache_write``) written back to C once per (i0, j0) tile
(``reverse_compute_at`` under j0); vectorize j1, the contiguous spatial loop;
parallelize i0, the outermost loop, so the threads fork once and own
disjoint rows of C.
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
