"""RIGHT (alternative): the reference with split(..., preserve_unit_iters=False): the same loops, extents
and kinds, but a loop of extent 1 is left out of the block's bindings (it is always 0). Rule 1 counts it as the loop
at its place (red team round 4)."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]], preserve_unit_iters=False)
    j0, j1 = sch.split(j, factors=[None, tiles["j"]], preserve_unit_iters=False)
    k0, k1 = sch.split(k, factors=[None, tiles["k"]], preserve_unit_iters=False)
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
