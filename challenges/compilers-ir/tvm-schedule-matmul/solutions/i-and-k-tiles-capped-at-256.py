"""WRONG (rule 1): clamps the i and k tiles (not j, whose width is the vector) to 256, the
largest dimension the statement allows: an i or k tile larger than 256 gets an inner loop of
extent 256 instead of the tile."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    cap = 256
    tiles = {axis: (t if axis == "j" else min(int(t), cap)) for axis, t in tiles.items()}
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
