"""MISTAKE: "keep the threads busy": when the i-outer loop has a single iteration (ti >= M), the
candidate parallelizes j0 instead. Rule 2: no loop around the update other than i outer may be parallel.
Oracle: oracle/check.py (1,37,29) tiles (4,8,4) and (20,20,20)... : "loop 1 kind 1" when ceil(N/tj) > 1.
"""
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
    wb = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(wb, j0)
    sch.vectorize(j1)
    if (M + tiles["i"] - 1) // tiles["i"] > 1:
        sch.parallel(i0)
    else:
        sch.parallel(j0)
    return sch
