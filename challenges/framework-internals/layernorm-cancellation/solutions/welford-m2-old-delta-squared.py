# Wrong on purpose: Welford's update with M2 += delta**2, where delta is the deviation from the
# *old* mean. The right increment is delta * (x_k - new mean) = delta**2 * (k - 1) / k: the first
# step (mean 0) adds x_1**2, and every later one delta**2 / k too much. No cancellation, and wrong.
"""Welford's one-pass update over the last dimension, in float32.

For k = 1..D:

    delta = x_k - mean
    mean  = mean + delta / k
    M2    = M2 + delta * delta

The variance is M2 / D.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    d = xf.shape[-1]
    mean = torch.zeros(xf.shape[:-1], dtype=torch.float32)
    m2 = torch.zeros(xf.shape[:-1], dtype=torch.float32)
    for k in range(d):
        xk = xf[..., k]
        delta = xk - mean
        mean = mean + delta / (k + 1)
        m2 = m2 + delta * delta  # should be delta * (x_k - new mean), or delta**2 * k / (k + 1)
    rstd = 1.0 / torch.sqrt(m2 / d + eps)
    y = (xf - mean[..., None]) * rstd[..., None] * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean, rstd
