"""WRONG (global state): shuffles the terms with a fixed seed, resetting torch's global RNG.

Mistake: to make the result independent of the input order ("the same terms reordered")
and reproducible, the candidate calls `torch.manual_seed(0)` and permutes x with
`torch.randperm` before an exact TwoSum tree. The sum is right, but every call resets
the caller's global random generator (its later torch.rand calls repeat).
Breaks (if the RNG counts as a global setting): "Importing your file, and each call, must
leave torch's global settings as they found them."
"""

from __future__ import annotations

import torch


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    torch.manual_seed(0)
    v = v[torch.randperm(v.numel())]
    errs = []
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        v, e = _two_sum(v[0::2], v[1::2])
        errs.append(e)
    comp = torch.cat(errs).sum() if errs else torch.zeros((), dtype=torch.float32)
    return v[0] + comp
