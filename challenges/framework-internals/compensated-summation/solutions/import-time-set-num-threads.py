"""Pairwise TwoSum tree; pins torch to one thread at import so reductions are reproducible, and never restores it."""
from __future__ import annotations

import torch

torch.set_num_threads(1)  # deterministic reduction order


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
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
