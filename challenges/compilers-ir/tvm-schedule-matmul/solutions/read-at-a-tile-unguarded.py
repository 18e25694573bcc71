"""WRONG (rule 4): the required nest, plus the ti x tk tile of A staged in a local buffer once per k tile with
`read_at(k0, block, 0, "local")` (red team round 6, blind; round 5 staged B the same way).

`read_at` emits an `auto_copy` block whose copy loops cover the whole ti x tk tile with no tail predicate, so
on a tail in i or k it reads rows of A at or past M and columns at or past K. Those values land where the
update never reads, so C comes out right on ordinary tails; only the out-of-range reads are wrong (and with
tiles far above the matrix the copy can corrupt the heap). `cache_read` followed by `compute_at(k0)` keeps the
predicate.
"""

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
    sch.read_at(k0, block, 0, "local")  # stage the A tile this k tile uses: no tail guard
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
