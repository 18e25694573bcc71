"""IDEA: one-pass shifted-data variance, shifted by the row MEDIAN (a robust guess of the
mean: |median - mean| <= sigma, so E[(x-K)^2] <= 2 sigma^2 and nothing cancels), then y
from the float32 mean.
Oracle: oracle/check.py -> FAILS: 0 on all families (outliers at any position, constant rows,
range, layout).
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    k = xf.contiguous().median(-1, keepdim=True).values  # median misbehaves on stride-0 views
    d = xf - k
    s1 = d.mean(-1, keepdim=True)
    s2 = (d * d).mean(-1, keepdim=True)
    mean = k + s1
    var = (s2 - s1 * s1).clamp_min(0)
    rstd = torch.rsqrt(var + eps)
    y = ((xf - mean) * rstd) * weight.float() + bias.float()
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
