"""CORRECT (owner, red team round 4): two passes in float32, row block by row block, with the shortcuts the
round's wrong solutions took, done right.

D = 1 and inputs whose rows are all constant have y equal to the bias and mean equal to x; the shortcuts
return copies (``clone``), never views of ``x`` or ``bias``. Otherwise the mean is refined by the mean of
the deviations from a first tree-summed mean, the variance is a second pass over the deviations, and the
outputs are written block by block into buffers made by this call.
"""

from __future__ import annotations

import torch


def _rstd_of_zero_variance(shape: tuple[int, ...], eps: float) -> torch.Tensor:
    return torch.full(shape, eps, dtype=torch.float32).sqrt().reciprocal()


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    d = x.shape[-1]
    lead = tuple(x.shape[:-1])
    xf = x.to(torch.float32)
    if x.numel() > 0 and (d == 1 or bool((xf == xf[..., :1]).all())):
        y = bias.expand(x.shape).clone()
        mean = xf[..., 0].clone()
        return y, mean, _rstd_of_zero_variance(lead, eps)
    rows = xf.reshape(-1, d)
    w32, b32 = weight.to(torch.float32), bias.to(torch.float32)
    y = torch.empty(rows.shape, dtype=x.dtype)
    mean = torch.empty(rows.shape[0], dtype=torch.float32)
    rstd = torch.empty(rows.shape[0], dtype=torch.float32)
    for start in range(0, rows.shape[0], 512):
        block = rows[start : start + 512]
        m0 = block.sum(-1, keepdim=True) / d
        m = m0 + (block - m0).sum(-1, keepdim=True) / d
        c = block - m
        r = torch.rsqrt((c * c).sum(-1, keepdim=True) / d + eps)
        y[start : start + 512] = ((c * r) * w32 + b32).to(x.dtype)
        mean[start : start + 512] = m[:, 0]
        rstd[start : start + 512] = r[:, 0]
    return y.reshape(x.shape), mean.reshape(lead), rstd.reshape(lead)
