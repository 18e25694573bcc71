"""MISTAKE: works on sch.copy() "to leave the caller's schedule untouched" and returns the copy;
the statement says "Transform sch in place ... and return it". The passed-in sch stays naive.
Oracle: oracle/check.py: "returned a different schedule; sch left untouched" (sch.mod still naive).
"""
from __future__ import annotations

import tvm

def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    sch = sch.copy()
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    wb = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(wb, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
