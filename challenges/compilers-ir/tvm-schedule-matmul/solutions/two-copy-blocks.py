"""WRONG (rule 3): two write caches: the update accumulates into a "local" tile that is copied into
a "global" staging buffer, which a second block copies into C (both under j_0, after the k loops).
Two copy blocks, and the block that writes C does not read the update's buffer."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "global")  # C_global -> C
    staging = sch.cache_write(block, 0, "local")  # update -> C_local -> C_global
    sch.reverse_compute_at(staging, j0)
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
