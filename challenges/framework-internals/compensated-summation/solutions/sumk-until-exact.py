"""Correct alternative: cascaded error-free passes (SumK style), stopping early when nothing is left.

Pass 1 sums x with a pairwise TwoSum tree and keeps every rounding error
exactly, so sum(x) = hi1 + sum(E1) exactly. Pass 2 does the same to E1, pass 3
to E2; a pass whose errors are all zero ends the cascade (one yes/no per error
vector). The few partial results are then added smallest first.
"""
from __future__ import annotations

import torch


def _tree(v: torch.Tensor):
    errs = []
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        a = v[0::2]
        b = v[1::2]
        s = a + b
        bp = s - a
        errs.append((a - (s - bp)) + (b - bp))
        v = s
    e = torch.cat(errs) if errs else v.new_zeros(0)
    return v.reshape(()), e


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    his = []
    tail = torch.zeros((), dtype=torch.float32)
    for _ in range(3):
        hi, e = _tree(v)
        his.append(hi)
        if not (e != 0).any():
            break
        v = e
    else:
        tail = v.sum()
    r = tail
    for h in reversed(his):
        r = h + r
    return r
