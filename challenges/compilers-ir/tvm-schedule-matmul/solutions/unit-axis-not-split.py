"""WRONG (rule 1): an axis of extent 1 is not split ("a loop of 1 has nothing to tile"): for M, N
or K equal to 1 the update sits under five loops instead of six."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)

    def tile(loop, t):
        if int(sch.get(loop).extent) == 1:
            return loop, None
        return sch.split(loop, factors=[None, t])

    i0, i1 = tile(i, tiles["i"])
    j0, j1 = tile(j, tiles["j"])
    k0, k1 = tile(k, tiles["k"])
    order = [l for l in (i0, j0, k0, i1, k1, j1) if l is not None]
    if len(order) > 1:
        sch.reorder(*order)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    if j1 is not None:
        sch.vectorize(j1)
    sch.parallel(i0)
    return sch
