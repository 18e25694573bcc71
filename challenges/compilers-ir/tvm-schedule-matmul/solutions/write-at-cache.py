"""WRONG (rule 4): the write cache made in one call, `write_at(j0, block, 0, "local")` ("create a write cache at
a loop"), instead of cache_write + reverse_compute_at (red team round 5, blind).

`write_at` emits an `auto_copy` block that copies the whole ti x tj tile into C with no tail predicate: on a tail
in i or j it writes C past its last row or column (the compiled kernel can abort on the corrupted heap).
`cache_write` followed by `reverse_compute_at` derives the copy's region from the update and keeps the guard."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.write_at(j0, block, 0, "local")  # the copy covers the whole tile: no tail guard
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
