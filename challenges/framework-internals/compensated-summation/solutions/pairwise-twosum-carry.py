"""RIGHT (red team round 1): a pairwise (tree) summation in float32 where every addition is a TwoSum.

At each level the vector is halved: even + odd elements, with the exact
rounding error of each addition computed branch-free by Knuth's TwoSum (six
flops, no magnitude test). An odd element out is carried to the next level.
All the error terms of all levels are collected and summed with one float32
``torch.sum`` at the end, then added to the single value that is left. About
log2(n) levels, each fully vectorised.
"""

from __future__ import annotations

import torch


def _two_sum(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    errs = []
    while v.numel() > 1:
        n = v.numel()
        h = n // 2
        s, e = _two_sum(v[0:2 * h:2], v[1:2 * h:2])
        errs.append(e)
        if n % 2:
            s = torch.cat([s, v[n - 1:]])
        v = s
    if not errs:
        return v.reshape(()).clone()
    comp = torch.cat(errs).sum()
    return (v[0] + comp).reshape(())
