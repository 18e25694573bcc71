"""MISTAKE: one-pass "shifted data" variance, shifting by the row's SECOND element
(the statement warns that the first channel may be the massive one, so the candidate
picks channel 1). Fails when the outlier sits at position 1 (any position is allowed).
Oracle: oracle/check.py 'outlier+offset pos1' (mean 100, std 0.05, x[:,1]=-1e6) -> rstd off
far beyond the bound; other positions pass.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    D = xf.shape[-1]
    k = xf[..., 1:2] if D > 1 else xf[..., 0:1]
    d = xf - k
    s1 = d.mean(-1, keepdim=True)
    s2 = (d * d).mean(-1, keepdim=True)
    mean = k + s1
    var = (s2 - s1 * s1).clamp_min(0)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean) * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
