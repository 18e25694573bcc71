"""Wrong: the tile sizes are unpacked by position (ti, tj, tk = tiles.values()) instead
of by key, so a tiles dict whose keys are not in the order i, j, k gets its tiles
applied to the wrong axes."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    ti, tj, tk = tiles.values()
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    k0, k1 = sch.split(k, factors=[None, tk])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
