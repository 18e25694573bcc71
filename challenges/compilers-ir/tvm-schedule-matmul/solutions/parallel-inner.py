"""Parallelizes i1, the rows inside a tile, instead of the outer tile loop i0.

The rows of a tile are independent, so TVM accepts it and the results are
right. But a parallel loop hands its iterations to the thread pool and
waits for all of them every time the loops outside it enter it: here once
per (i0, j0, k0) iteration, 4096 times for a 256-cube with tiles (32, 32, 4),
each time for 4096 multiply-adds. Measured here it is slower than the naive
schedule. Parallelize the outermost loop: the pool is entered once, and
each thread owns whole rows of C.
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
    sch.parallel(i1)
    return sch
