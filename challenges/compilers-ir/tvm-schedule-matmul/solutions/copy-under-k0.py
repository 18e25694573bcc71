"""WRONG (rule 3): the write-back is attached under the outer k loop (reverse_compute_at(wb, k0)),
so the tile is copied to C once per k tile (ceil(K/tk) times), inside the k loops, not once after them.
Numerically the last copy wins, so C is right."""

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
    sch.reverse_compute_at(write_back, k0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
