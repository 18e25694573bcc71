"""MISTAKE: a shortcut for D == 1 (var is 0, y is bias) that returns mean = x[..., 0] in
x's dtype instead of float32 (the table says float32 whatever the dtype of x).
Oracle: oracle/check.py 'D=1 torch.float16' -> mean dtype float16.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    if x.shape[-1] == 1:
        mean = x[..., 0]
        rstd = torch.full(mean.shape, 1.0 / (eps**0.5), dtype=torch.float32)
        y = bias.expand(x.shape).clone()
        return y, mean, rstd
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    c = xf - mean
    var = (c * c).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = c * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
