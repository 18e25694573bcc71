"""WRONG (rule 2): parallelizes i0 only when M // ti >= 2, a floor where the outer extent is a ceiling:
M = 20 with ti = 16 has two i tiles and a serial outer i loop (red team round 4)."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    M = int(sch.get(i).extent)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    if M // tiles["i"] >= 2:  # fork threads only when there are at least two i tiles to share
        sch.parallel(i0)
    return sch
