"""MISTAKE (added with red team round 3's zero-row fix): every row is divided by its median |x|, a
"robust" scale that ignores a few massive channels, to keep the squares in range, with no guard
for a scale of 0. A row that is zero but for a few elements has a median |x| of 0: 0/0 = NaN
in mean, rstd and y, although the statement allows any finite values and every output must be
finite. (A row of zeros fails the same way.)
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    xf = x.to(torch.float32)
    s = xf.abs().median(-1, keepdim=True).values     # per-row robust scale
    xs = xf / s
    mean_s = xs.mean(-1, keepdim=True)
    cs = xs - mean_s
    var_s = (cs * cs).mean(-1, keepdim=True)
    mean = mean_s * s
    centered = cs * s
    rstd = 1.0 / torch.sqrt(var_s * (s * s) + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
