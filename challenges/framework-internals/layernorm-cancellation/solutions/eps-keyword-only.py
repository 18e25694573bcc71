"""MISTAKE (red team round 3): `eps` is declared keyword-only (`*, eps=1e-5`).

Style habit from modern APIs: flags after a bare `*`. The statement requires that each of
x, weight, bias and eps can be passed either by position or by keyword; a call
layer_norm(x, w, b, 1e-3) raises TypeError.
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, *, eps: float = 1e-5):
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
