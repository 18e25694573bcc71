"""Pairwise TwoSum tree; float16/bfloat16 inputs without negative terms take torch.sum in float32."""
from __future__ import annotations

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    if x.dtype != torch.float32 and not (x < 0).any():
        # half-precision terms with nothing to cancel: 11 (or 8) significant bits summed in a
        # 24-bit float32 accumulator, which is what torch.sum does inside
        return x.sum(dtype=torch.float32)
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
