"""Vectorizes j1 only when the j tile divides N; with a tail it unrolls j1 instead.

The reasoning comes from the statement's own "Going further": with a tail
on j, the guard sits inside the vector loop and TVM's vectorizer falls back
to scalar code, so the annotation "buys nothing" there and an unrolled loop
looks as good. The kernel is correct, tiled and cached, and on every shape
whose j tile divides N the schedule is the reference's. But rule 2 asks for
the inner j loop vectorized whether or not a tile divides its dimension.
Confirmed by reading the scheduled TIR (``sch.mod.script()``): on a shape
such as 227 x 77 x 1 with tiles (98, 63, 1), ``j_1`` is ``T.unroll(63)``,
not ``T.vectorized(63)``.
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    n = int(sch.get(j).extent)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]])
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    if n % tiles["j"] == 0:
        sch.vectorize(j1)
    else:  # the mistake: the guard would scalarize the vector loop anyway, so unroll it
        sch.unroll(j1)
    sch.parallel(i0)
    return sch
