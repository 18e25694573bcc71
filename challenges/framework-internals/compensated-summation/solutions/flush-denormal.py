"""WRONG (red team round 1): turns on flush-to-zero (``torch.set_flush_denormal(True)``) to keep the Python loop fast.
Float32 and bfloat16 subnormal inputs (and subnormal intermediates) then count as zero, and flush-to-zero stays
on for the rest of the process.
"""

from __future__ import annotations

import math

import torch

MAX_LEVELS = 64


def _neumaier_lanes(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum a (k, m) float32 tensor down its columns: (the m lane sums, the k*m rounding errors)."""
    s = torch.zeros(rows.shape[1], dtype=torch.float32)
    errors = []
    for y in rows:
        t = s + y
        errors.append(torch.where(s.abs() >= y.abs(), (s - t) + y, (y - t) + s))
        s = t
    return s, torch.stack(errors)


def total(x: torch.Tensor) -> torch.Tensor:
    """The sum of a 1-D float16/bfloat16/float32 tensor, as a 0-d float32 tensor."""
    torch.set_flush_denormal(True)  # BUG: "denormals are slow"; flushes float32 subnormals to 0
    v = x.reshape(-1).to(torch.float32)
    compensation = torch.zeros((), dtype=torch.float32)
    for _ in range(MAX_LEVELS):
        if v.numel() <= 1:
            break
        n = v.numel()
        k = max(2, math.isqrt(n))
        m = -(-n // k)
        padded = torch.cat([v, v.new_zeros(k * m - n)])
        v, errors = _neumaier_lanes(padded.reshape(k, m))
        compensation = compensation + errors.sum()
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    return v[0] + compensation
