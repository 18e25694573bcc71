"""WRONG (rule 2): vectorizes "the write-back's innermost loop" without checking that it is the copy's own.

Otherwise the shipped decomposed-init: loops fetched by block name, decompose_reduction last, k1 unrolled.
The copy of a 1 x 1 tile (tiles of 1 on i and j, or a single row with a j tile of 1) has no loop of its
own, because TVM drops unit loops, so get_loops(write_back)[-1] is j0, the outer j loop around the update:
with N > 1 tiles it has extent ceil(N / tj) > 1 and rule 2 allows only the inner j loop to be vectorized.
(Shipped as accepted until red team round 3 showed the 1 x 1 copy; no probe had i and j tiles of 1.)
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    for position, axis in enumerate("ijk"):
        loop = sch.get_loops("C")[2 * position]  # the untiled loops sit after the ones already split
        sch.split(loop, factors=[None, tiles[axis]])
    i0, i1, j0, j1, k0, k1 = sch.get_loops("C")
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write("C", 0, "local")
    sch.reverse_compute_at(write_back, sch.get_loops("C")[1])
    i0, j0, k0, i1, k1, j1 = sch.get_loops("C")
    sch.unroll(k1)
    sch.vectorize(j1)
    sch.vectorize(sch.get_loops(write_back)[-1])
    sch.parallel(i0)
    # Last: once the zeroing is a block of its own, the update is no longer a
    # reduction block with an init, and TVM refuses to vectorize or
    # parallelize loops around it.
    sch.decompose_reduction("C", k0)
    return sch
