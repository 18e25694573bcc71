"""Correct, and tiled, annotated and cached as required, but each tile is
first shrunk to its dimension: ``min(t, n)``. When a tile is larger than the
matrix, the inner loop gets the matrix's extent instead of the tile's.

Plausible: it removes a predicate that is always true for the first rows and
looks like a harmless optimisation. But rule 1 fixes the inner extents to the
tiles, "possibly larger than their dimension", so the loop nest is not the
one required.
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    # No tile larger than its dimension: a 16-row tile of a 7-row matrix only guards 9 empty rows.
    M, N, K = (int(sch.get(loop).extent) for loop in (i, j, k))
    tiles = {"i": min(tiles["i"], M), "j": min(tiles["j"], N), "k": min(tiles["k"], K)}
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
