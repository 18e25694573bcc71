"""WRONG (rule 4): the required nest, plus the tk x tj tile of B staged in a local buffer once per k tile with
`read_at(k0, block, 1, "local")`, TVM's one-call "cache read at a loop" (red team round 5, blind).

`read_at` emits an `auto_copy` block whose copy loops cover the whole tk x tj tile with no tail predicate, so on a
tail in k or j it reads rows of B at or past K and columns at or past N. Those values land in the part of B_local
the update never reads, so C comes out right; only the out-of-range reads are wrong. `cache_read` followed by
`compute_at(k0)` (packed-b-panel) keeps the predicate."""

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
    sch.read_at(k0, block, 1, "local")  # stage the B tile this k tile uses: no tail guard
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
