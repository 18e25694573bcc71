"""RIGHT (alternative): pad the iteration domain instead of guarding the tails (red team round 5, blind).

`pad_einsum` rounds every axis up to a multiple of its tile, so the splits are exact and the update block needs no
tail predicate; its domain is the padded one. The padding blocks of A and B are inlined, so an element past the
matrix is read as `if_then_else(in range, A[i, k], 0)` (the branch not taken is never evaluated). The padded result
buffer C_pad is the write cache: its scope is set to "local", and the un-padding block (C_pad -> C, predicated) is
moved under j0, so it runs once per finished ti x tj tile."""

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
    try:
        unpad = sch.get_sblock("C_pad")
    except ScheduleError:  # M and N already divide: no padded C, use an ordinary write cache
        unpad = sch.cache_write(block, 0, "local")
    else:
        sch.set_scope(block, 0, "local")
    sch.reverse_compute_at(unpad, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
