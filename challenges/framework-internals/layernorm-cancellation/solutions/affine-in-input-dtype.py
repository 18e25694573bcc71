"""MISTAKE: statistics in float32, but the normalised value is cast to x's dtype before the
affine step, so w*xhat + b is done in float16/bfloat16 (three roundings). When w*xhat and b
nearly cancel, y's relative error is far above 2u.
Oracle: oracle/check.py 'basic torch.bfloat16 D=1024' (random w, b) -> y fails.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    c = xf - mean
    var = (c * c).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    xhat = (c * rstd).to(x.dtype)
    y = xhat * weight + bias
    return y, mean.squeeze(-1), rstd.squeeze(-1)
