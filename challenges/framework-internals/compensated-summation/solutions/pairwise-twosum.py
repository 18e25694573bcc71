"""Cascaded TwoSum: pairwise summation that keeps every rounding error.

Each level adds neighbours in pairs, ``s = a + b``, and Knuth's TwoSum
recovers the exact error ``e`` with ``a + b == s + e``. The errors of a level
are summed in float32 (they are about u times smaller than the data, so their
own rounding error is second order) and added at the end.
"""

from __future__ import annotations

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    error = torch.zeros((), dtype=torch.float32)
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        pairs = v.reshape(-1, 2)
        a, b = pairs[:, 0], pairs[:, 1]
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)  # TwoSum: exact for any magnitudes
        error = error + e.sum()
        v = s
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    return v[0] + error
