"""Pairwise summation in float32, without compensation.

Pairwise summation is better than a running sum (its error grows with
log2(n) rather than n), but it still rounds every partial sum and forgets the
error: when the terms cancel, the error is a fraction of sum(|x|), not of the
answer.
"""

from __future__ import annotations

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        v = v[0::2] + v[1::2]
    return v[0]
