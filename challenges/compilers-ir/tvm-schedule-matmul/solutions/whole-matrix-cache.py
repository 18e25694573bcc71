"""Adds the write cache but never moves its write-back: no reverse_compute_at.

``cache_write`` alone makes the update block write a new buffer the size of
the whole of C and appends a second loop nest, after the product, that
copies it into C. The results are right, but the "cache" is a second copy
of the whole output, written completely before the first element of C is,
and the copy is a second pass over M x N elements. Moved under the j tile
loop with ``reverse_compute_at``, the write-back copies each finished
ti x tj tile right after its last k tile, and TVM shrinks the cache buffer
to one tile.
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
    sch.cache_write(block, 0, "local")
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
