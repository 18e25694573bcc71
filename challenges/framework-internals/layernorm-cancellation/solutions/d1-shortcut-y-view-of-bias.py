"""MISTAKE (red team round 4): a shortcut for D = 1 returns y = bias.expand(x.shape).

Every deviation is 0, so y equals the bias exactly, but it is a stride-0 view of the caller's
bias: when the caller changes bias in place, the y it already holds changes too ("returns new
tensors").
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    c = xf - mean
    var = (c * c).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    if x.shape[-1] == 1:
        y = bias.expand(x.shape)                                # exact, but aliases bias
    else:
        y = (c * rstd * weight.to(torch.float32) + bias.to(torch.float32)).to(x.dtype)
    return y, mean.squeeze(-1), rstd.squeeze(-1)
