"""WRONG (the stated signature): the reference with its parameters renamed, schedule_matmul(s, tile_sizes)
instead of schedule_matmul(sch, tiles), so a call by keyword raises TypeError (red team round 4). The platform
refuses it before it runs (rule_violation)."""

from __future__ import annotations

import tvm


def schedule_matmul(s: tvm.s_tir.Schedule, tile_sizes: dict[str, int]) -> tvm.s_tir.Schedule:
    sch, tiles = s, tile_sizes
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
