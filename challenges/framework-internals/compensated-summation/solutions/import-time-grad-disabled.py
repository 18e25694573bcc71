"""Pairwise TwoSum tree; switches autograd off at import (module top level) and never switches it back."""
from __future__ import annotations

import torch

torch.set_grad_enabled(False)  # pure numerics: no autograd anywhere in this module


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
