"""WRONG (rule 3): the required nest, but no write cache when one tile covers the whole problem (ti >= M,
tj >= N and tk >= K): "one tile and one pass over k, so C itself can be the accumulator" (red team round 6,
blind; its siblings skipped the cache when only ti >= M and tj >= N, or only tk >= K).

The values are right and the nest, the annotations and every access are as required; only the update writes
C directly, with no block copying a buffer of its own into C. Rule 3 holds for every shape and tile, also
when a single tile covers a dimension or the whole problem.
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    M, N, K = (int(sch.get(loop).extent) for loop in (i, j, k))
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    if not (tiles["i"] >= M and tiles["j"] >= N and tiles["k"] >= K):  # one tile: no cache, "nothing to stage"
        write_back = sch.cache_write(block, 0, "local")
        sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
