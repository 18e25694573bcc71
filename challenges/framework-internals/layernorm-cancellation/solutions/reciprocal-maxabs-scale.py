"""MISTAKE (added with red team round 3's zero-row fix): every row is scaled by the reciprocal of
its max |x|, computed once and multiplied in (a multiply is cheaper than a divide). For a row of
subnormals, 1 / max|x| is past float32's largest value: inf, and the statistics become NaN
(0 * inf, inf - inf); for a row of zeros, 1 / 0 = inf too. The statement allows subnormal
values and requires every output to be finite.
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    xf = x.to(torch.float32)
    s = xf.abs().amax(-1, keepdim=True)              # per-row scale, max |x|
    xs = xf * (1.0 / s)
    mean_s = xs.mean(-1, keepdim=True)
    cs = xs - mean_s
    var_s = (cs * cs).mean(-1, keepdim=True)
    mean = mean_s * s
    centered = cs * s
    rstd = 1.0 / torch.sqrt(var_s * (s * s) + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
