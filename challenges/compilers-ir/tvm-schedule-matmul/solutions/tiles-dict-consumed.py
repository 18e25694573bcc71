"""RIGHT (alternative): reads the tile sizes by popping them out of the dict it was given; the statement
says each call gets a dict of its own that nothing reads afterwards (red team round 4)."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    tiles = {"i": tiles.pop("i"), "j": tiles.pop("j"), "k": tiles.pop("k")}
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
