"""MISTAKE (red team round 4): a shortcut for D = 1 returns mean = x[..., 0].to(torch.float32).

With one element per row the mean is the element and the variance 0. But for a float32 x
`.to(torch.float32)` returns x itself, so mean is a view of the caller's x: when the caller
changes x in place, the mean it already holds changes too ("returns new tensors").
"""

from __future__ import annotations

import math

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    if x.shape[-1] == 1:
        mean = x[..., 0].to(torch.float32)                      # view of x when x is float32
        rstd = torch.full(x.shape[:-1], 1.0 / math.sqrt(eps), dtype=torch.float32)
        y = bias.to(torch.float32).expand(x.shape).to(x.dtype).clone()
        return y, mean, rstd
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    c = xf - mean
    var = (c * c).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = c * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
