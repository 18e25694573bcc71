"""Layer norm over the last dimension, returning the statistics it used.

Write ``layer_norm(x, weight, bias, eps)``: it returns ``(y, mean, rstd)``
with ``y`` in x's dtype and ``mean``/``rstd`` in float32 of shape
``x.shape[:-1]``, accurate to the bounds in the statement. Do not call
var/std or a normalisation layer, create no float64 tensors, and keep the
data in torch.

The version below is the textbook one-pass formula, var = E[x^2] - E[x]^2.
It is exact in real numbers; try it on rows whose mean is large next to
their spread.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    mean = x.mean(-1, keepdim=True)
    var = (x * x).mean(-1, keepdim=True) - mean * mean
    rstd = torch.rsqrt(var + eps)
    y = (x - mean) * rstd * weight + bias
    return y, mean.squeeze(-1).float(), rstd.squeeze(-1).float()
