"""MISTAKE: to keep squares in range the candidate divides the WHOLE tensor by its global
max |x| (instead of per row) and rescales the statistics afterwards. Rows far smaller than
the largest row are pushed into float32's subnormals / zero and lose their precision.
Oracle: oracle/check.py 'bf16 mixed rows' / 'f32 mixed rows' (row0 ~1e15, row1 ~1e-20,
row2 ~1e-38): rstd/y of the small rows fail by orders of magnitude.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    s = xf.abs().amax() if xf.numel() else torch.ones(())
    s = torch.where(s > 0, s, torch.ones_like(s))
    xs = xf / s
    ms = xs.mean(-1, keepdim=True)
    c = xs - ms
    var = (c * c).mean(-1, keepdim=True) * s * s
    mean = ms * s
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean) * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
