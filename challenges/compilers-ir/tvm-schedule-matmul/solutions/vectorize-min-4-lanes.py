"""WRONG (rule 2): j1 vectorized unless the j tile is narrower than 4 lanes ("a vector costs more than it saves"),
where it is unrolled instead (red team round 5, blind).

Rule 2 holds for a j tile of any width, narrow ones too: with a j tile of 2 or 3 the inner j loop runs 2 or 3
times and must still be vectorized (only a loop of extent 1 may carry any annotation)."""

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
    sch.reverse_compute_at(write_back, j0)
    if tiles["j"] >= 4:
        sch.vectorize(j1)
    else:
        sch.unroll(j1)
    sch.parallel(i0)
    return sch
