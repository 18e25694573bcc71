"""WRONG (red team round 1): when no padding is needed, builds the (k, m) rows with ``torch.as_strided(v, (k, m), (m, 1))``
to avoid a copy. That assumes v has stride 1; a non-contiguous float32 view (``y[::3]``; ``.to`` does not
copy it) is read from the wrong memory and the sum is silently wrong.
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
    v = x.reshape(-1).to(torch.float32)
    compensation = torch.zeros((), dtype=torch.float32)
    for _ in range(MAX_LEVELS):
        if v.numel() <= 1:
            break
        n = v.numel()
        k = max(2, math.isqrt(n))
        m = -(-n // k)
        if k * m == n:  # no padding needed: take the (k, m) rows without a copy
            rows = torch.as_strided(v, (k, m), (m, 1))  # BUG: assumes v is contiguous (stride 1)
        else:
            rows = torch.cat([v, v.new_zeros(k * m - n)]).reshape(k, m)
        v, errors = _neumaier_lanes(rows)
        compensation = compensation + errors.sum()
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    return v[0] + compensation
