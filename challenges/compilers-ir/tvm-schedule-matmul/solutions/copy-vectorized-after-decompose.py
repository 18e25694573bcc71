"""WRONG (every probe whose copy has no loop of its own): vectorizes the innermost loop of the zeroing and
of the copy after decompose_reduction, without checking that it is the block's own loop.

Otherwise correct: cache first (global scope), explicit factors ceil(n / t), j1 vectorized, k1 unrolled,
i0 parallel. For tiles of 1 on i and j, or a 1 x 1 matrix, the copy has no loop of its own (TVM drops unit
loops), get_loops(copy)[-1] is j0, and TVM refuses to vectorize it (it holds the update's loops): the
schedule raises on shapes and tiles the statement allows (red team round 3's remark on 1 x 1 copies).
"""

from __future__ import annotations

import tvm


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    update = sch.get_sblock("C")
    write_back = sch.cache_write(update, 0, "global")
    loops = sch.get_loops(update)
    extents = [int(sch.get(loop).extent) for loop in loops]
    (i0, i1), (j0, j1), (k0, k1) = (
        sch.split(loop, factors=[_ceil_div(n, int(tiles[axis])), int(tiles[axis])])
        for loop, n, axis in zip(loops, extents, ("i", "j", "k"), strict=True)
    )
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)  # before decompose_reduction: afterwards the update is no longer a reduction block
    sch.unroll(k1)
    sch.parallel(i0)
    init = sch.decompose_reduction(update, k0)
    for blk in (init, write_back):
        sch.vectorize(sch.get_loops(blk)[-1])  # the mistake: not necessarily the block's own loop
    return sch
