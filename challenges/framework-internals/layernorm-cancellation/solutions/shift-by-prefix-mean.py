"""MISTAKE (red team round 4): a one-pass variance shifted by the mean of each row's first 32 channels.

var = mean((x - K)^2) - mean(x - K)^2 with K = mean(x[..., :32]): robust to one massive
activation, unlike a shift by x[0], but when the first few dozen channels are a cluster far from
the rest, K is as far from the mean as x[0] would be and the subtraction cancels again.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    k = xf[..., :32].mean(-1, keepdim=True)
    d = xf - k
    m1 = d.mean(-1, keepdim=True)
    m2 = (d * d).mean(-1, keepdim=True)
    var = (m2 - m1 * m1).clamp(min=0)
    mean = k + m1
    rstd = 1.0 / torch.sqrt(var + eps)
    c = xf - mean
    y = c * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
