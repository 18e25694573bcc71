"""MISTAKE: skips the split of an axis whose tile is 1 ("a split by 1 is a no-op") and uses the
whole loop as the outer one plus no inner loop: the update then sits under 5 loops (rule 1 wants 6,
the inner of extent 1), and with tj == 1 nothing is vectorized.
Oracle: oracle/check.py (1,1,1) tiles (1,1,1), (13,1,5) tiles (2,4,1): "update under 5/3 loops".
"""
from __future__ import annotations

import tvm

def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    parts = []
    for loop, t in ((i, tiles["i"]), (j, tiles["j"]), (k, tiles["k"])):
        parts.append(sch.split(loop, factors=[None, t]) if t > 1 else (loop, None))
    (i0, i1), (j0, j1), (k0, k1) = parts
    order = [l for l in (i0, j0, k0, i1, k1, j1) if l is not None]
    sch.reorder(*order)
    wb = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(wb, j0)
    if j1 is not None:
        sch.vectorize(j1)
    sch.parallel(i0)
    return sch
