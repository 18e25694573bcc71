"""Pairwise TwoSum tree; fewer than 8 terms are added in order of decreasing magnitude without compensation."""
from __future__ import annotations

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    if v.numel() < 8:
        # a handful of terms: add them largest first, so that big terms cancel before small ones join
        v = v[torch.argsort(v.abs(), descending=True)]
        s = torch.zeros((), dtype=torch.float32)
        for i in range(v.numel()):
            s = s + v[i]
        return s
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
