"""WRONG: halves every term "so no partial sum or error term can overflow", doubles the result.

Mistake: fearing overflow near the top of float32's range, the candidate computes on
x * 0.5 and returns 2 * sum. Halving is exact for normal numbers but rounds subnormal
ones (an odd multiple of 2**-149 halves to a tie), so subnormal inputs lose their last
bit. Otherwise an exact TwoSum tree with errors summed once.
Breaks: "Subnormal numbers ... are ordinary values: inputs ... count like any other number."
"""

from __future__ import annotations

import torch


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32) * 0.5
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    errs = []
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        v, e = _two_sum(v[0::2], v[1::2])
        errs.append(e)
    comp = torch.cat(errs).sum() if errs else torch.zeros((), dtype=torch.float32)
    return (v[0] + comp) * 2.0
