"""MISTAKE (red team round 3): to keep squares far from overflow, every row is first divided by its largest |x|
(statistics are computed on x / s and scaled back), but s is not guarded against 0:
an all-zero row gives 0/0 = NaN in mean, rstd and y.

The statement allows any finite values (a row of zeros is a constant row with
variance 0) and requires every output to be finite.
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    xf = x.to(torch.float32)
    s = xf.abs().amax(-1, keepdim=True)              # per-row scale, max |x|
    xs = xf / s
    mean_s = xs.mean(-1, keepdim=True)
    cs = xs - mean_s
    var_s = (cs * cs).mean(-1, keepdim=True)
    mean = mean_s * s
    centered = cs * s
    rstd = 1.0 / torch.sqrt(var_s * (s * s) + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
