"""Pairwise TwoSum tree; up to three terms are added directly (a + b) + c, judged too few to lose anything."""
from __future__ import annotations

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    if v.numel() <= 3:
        return v.sum()  # 0..3 terms: nothing to compensate
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
