"""MISTAKE: eps is materialised in x's dtype ("keep dtypes consistent"):
eps_t = torch.tensor(eps, dtype=x.dtype). In float16, eps = 1e-12 underflows to 0 (rstd = inf
on constant rows); in bfloat16, 1e-5 is rounded to 8 bits (rstd off by ~2^-10 where var << eps).
Oracle: oracle/check.py 'const torch.float16 eps1e-12' -> rstd NONFINITE; 'const torch.bfloat16' -> rstd fails.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    eps_t = torch.tensor(eps, dtype=x.dtype)
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    c = xf - mean
    var = (c * c).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps_t.float())
    y = c * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
