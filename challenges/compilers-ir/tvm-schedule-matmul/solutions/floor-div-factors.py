"""Computes the split factors itself, as whole tiles: [extent // t, t].

On shapes that every tile divides this is the reference schedule. When a
tile does not divide its dimension, the two factors cover fewer iterations
than the loop has, and TVM refuses the split ("The product of factors is not
larger than or equal to the extent of loop"); with a tile larger than the
dimension the outer factor is even 0. ``factors=[None, t]`` lets TVM compute
ceil(extent / t) and guard the tail with a predicate.
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    split = {}
    for axis, loop in zip("ijk", (i, j, k), strict=True):
        extent = int(sch.get(loop).extent)
        split[axis] = sch.split(loop, factors=[extent // tiles[axis], tiles[axis]])
    (i0, i1), (j0, j1), (k0, k1) = split["i"], split["j"], split["k"]
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
