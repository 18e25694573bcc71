"""MISTAKE (red team round 3): the affine step folds rstd into the weight first, y = (x - mean) * (rstd * weight) + bias.

This is how fused kernels usually write it (one per-row x per-channel scale). But
rstd * weight can overflow float32 where y does not: with a small spread (or a
constant row) rstd is up to 1/sqrt(eps), and a weight of 1e36 then gives inf
(and 0 * inf = NaN on a constant row), although every exact (x - mean) * rstd * w
fits. The statement: "No intermediate result may overflow where y does not."
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    scale = rstd * weight.to(torch.float32)          # (rows, D) per-row, per-channel scale
    y = centered * scale + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
