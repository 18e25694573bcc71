"""Splits all three loops but never reorders them: i0, i1, j0, j1, k0, k1.

A split on its own changes nothing about the order in which the elements
are visited: i0, i1 together still walk i from 0 to M - 1, and so on. The
"tiles" are never visited as tiles, and the loop nest is the naive one with
extra loop variables. The results are right, and TVM still vectorizes j1
(the whole k loop inside it becomes vector code), but every row of C walks
all of B: on a 1024-cube this measured 2-3x slower than the required
order. ``reorder(i0, j0, k0, i1, k1, j1)`` is what makes it a tiling.
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    # The mistake: six loops, but no reorder(i0, j0, k0, i1, k1, j1) afterwards.
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])  # noqa: RUF059
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])  # noqa: RUF059
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
