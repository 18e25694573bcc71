"""WRONG (rule 3): the iteration domain padded with pad_einsum (no tail guard in the update), the update
accumulating in a local write cache copied under j0 into the padded C, and pad_einsum's own un-padding block
(C_pad -> C) left at the root, after all the loops (red team round 5, blind).

The tile reaches C through a second buffer: the block under j0 copies the cache into C_pad, not into C, and the
block that writes C reads C_pad over the whole matrix after the product. No block copies the update's buffer into
C once per finished tile. The result is right. (pad-einsum-padded-loops makes C_pad itself the cache and moves the
un-padding block under j0.)"""

from __future__ import annotations

import contextlib

import tvm
from tvm.s_tir.schedule import ScheduleError


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    ti, tj, tk = tiles["i"], tiles["j"], tiles["k"]
    block = sch.get_sblock("C")
    sch.pad_einsum(block, [ti, tj, tk])
    for name in ("A_pad", "B_pad"):
        with contextlib.suppress(ScheduleError):  # no padding block when the axis already divides
            sch.compute_inline(sch.get_sblock(name))
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    k0, k1 = sch.split(k, factors=[None, tk])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
