"""Classic Kahan summation in float32, vectorised over 1024 lanes.

Kahan's update recovers the error of s + y with (t - s) - y, which is exact
only while the running sum is at least as large as the new term. A large term
arriving at a small running sum breaks that, and its error is lost.
"""

from __future__ import annotations

import torch

LANES = 1024


def _kahan(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    s = torch.zeros(rows.shape[1], dtype=torch.float32)
    c = torch.zeros_like(s)
    for row in rows:
        y = row - c
        t = s + y
        c = (t - s) - y
        s = t
    return s, c


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    n = v.numel()
    if n == 0:
        return torch.zeros((), dtype=torch.float32)
    k = -(-n // LANES)
    v = torch.cat([v, v.new_zeros(k * LANES - n)]).reshape(k, LANES)
    s, c = _kahan(v)
    # Kahan again over the lane sums, one lane; the lanes' own corrections subtract.
    s2, c2 = _kahan(s.reshape(-1, 1))
    return s2[0] - c2[0] - c.sum()
