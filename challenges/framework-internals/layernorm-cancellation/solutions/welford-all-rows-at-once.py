"""CORRECT (red team round 3): textbook Welford, one column at a time over all rows at once (float32),
then y = (x - mean) * rstd * weight + bias. The mean is a running mean, M2 a running sum
of squared deviations; no E[x^2] - E[x]^2 anywhere.
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    d = x.shape[-1]
    rows = x.reshape(-1, d).to(torch.float32)
    mean = torch.zeros(rows.shape[0], dtype=torch.float32)
    m2 = torch.zeros(rows.shape[0], dtype=torch.float32)
    for k in range(d):
        col = rows[:, k]
        delta = col - mean
        mean = mean + delta / (k + 1)
        m2 = m2 + delta * (col - mean)
    rstd = torch.rsqrt(m2 / d + eps)
    y = (rows - mean[:, None]) * rstd[:, None] * weight.to(torch.float32) + bias.to(torch.float32)
    lead = x.shape[:-1]
    return y.reshape(x.shape).to(x.dtype), mean.reshape(lead), rstd.reshape(lead)
