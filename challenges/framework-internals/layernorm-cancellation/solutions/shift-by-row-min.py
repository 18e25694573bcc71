"""MISTAKE: one-pass shifted-data variance shifted by the row MINIMUM (cheap, and never the
positive massive activation). When the channel far from the rest is NEGATIVE, the minimum is that
outlier, every other deviation is ~|outlier|, and E[(x-K)^2] - E[x-K]^2 cancels again.
Oracle: oracle/check.py 'outlier+offset pos*' (mean 100, std 0.05, one channel at -1e6 / +5e4):
rstd fails for the negative outlier in float32/bfloat16.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    k = xf.amin(-1, keepdim=True)
    d = xf - k
    s1 = d.mean(-1, keepdim=True)
    s2 = (d * d).mean(-1, keepdim=True)
    mean = k + s1
    var = (s2 - s1 * s1).clamp_min(0)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean) * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
