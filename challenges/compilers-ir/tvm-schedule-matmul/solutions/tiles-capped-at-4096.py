"""WRONG (rule 1): caps every tile at 4096 ("the probes go up to 4096"): a larger tile gets an inner
loop of extent 4096 instead of the tile (red team round 4)."""

from __future__ import annotations

import tvm

MAX_TILE = 4096  # the statement's probes go up to 4096; cap to keep the local tile bounded


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    ti, tj, tk = (min(tiles[a], MAX_TILE) for a in "ijk")
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    k0, k1 = sch.split(k, factors=[None, tk])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
