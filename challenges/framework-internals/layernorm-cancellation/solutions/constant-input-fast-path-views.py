"""MISTAKE (red team round 4): a fast path for inputs whose rows are all constant returns views.

var = 0, y = bias and mean = x[..., 0] exactly, so the fast path returns bias.expand(x.shape) and
xf[..., 0]: views of the caller's bias and (float32) x, on any shape: D = 1, constant rows, rows
of zeros. When the caller changes bias or x in place, the results it holds change too.
"""

from __future__ import annotations

import math

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    if x.numel() > 0 and bool((xf == xf[..., :1]).all()):
        mean = xf[..., 0]                                   # view of x for float32
        rstd = torch.full(x.shape[:-1], 1.0 / math.sqrt(eps), dtype=torch.float32)
        return bias.expand(x.shape), mean, rstd             # y: view of bias
    mean = xf.mean(-1, keepdim=True)
    c = xf - mean
    var = (c * c).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = c * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
