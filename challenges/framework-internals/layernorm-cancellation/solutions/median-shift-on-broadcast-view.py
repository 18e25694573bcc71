"""MISTAKE: one-pass variance shifted by the row median (sound in exact terms), but it calls
torch.median on x as given. On a broadcast view whose LAST dim has stride 0 (x = col.expand(N, D),
which the statement allows: "any strides", "broadcast views"), CPU torch.median returns garbage
(4.6e-41 instead of the value), the shift is lost and the constant rows cancel catastrophically.
Oracle: oracle/check.py 'expand cols torch.float32' -> rstd 3.08e3 x its bound.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    k = xf.median(-1, keepdim=True).values
    d = xf - k
    s1 = d.mean(-1, keepdim=True)
    s2 = (d * d).mean(-1, keepdim=True)
    mean = k + s1
    var = (s2 - s1 * s1).clamp_min(0)
    rstd = torch.rsqrt(var + eps)
    y = ((xf - mean) * rstd) * weight.float() + bias.float()
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
