"""Correct alternative: exact integer sum for float16, TwoSum tree otherwise.

Every float16 value is an integer multiple of 2^-24 and below 2^16, so
x * 2^24 is an integer below 2^40, exact in float32 and in int64; a million
of them sum exactly in int64 (< 2^61). The integer total is converted to
float32 once (one rounding) and scaled back by 2^-24 (exact: a nonzero
total is at least 2^-24, never subnormal). Everything stays inside torch.
bfloat16 and float32 use a pairwise TwoSum tree with the errors summed once.
"""
from __future__ import annotations

import torch


def _tree(v: torch.Tensor) -> torch.Tensor:
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
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
    comp = torch.cat(errs).sum() if errs else torch.zeros((), dtype=torch.float32)
    return v.reshape(()) + comp


def total(x: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.float16:
        ints = (x.reshape(-1).to(torch.float32) * 16777216.0).to(torch.int64)
        acc = ints.sum()  # exact in int64
        return acc.to(torch.float32) * (1.0 / 16777216.0)
    return _tree(x.reshape(-1).to(torch.float32))
