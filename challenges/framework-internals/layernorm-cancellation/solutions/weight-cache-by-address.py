"""MISTAKE (red team round 3): caches the float32 copies of weight and bias across calls, keyed on the tensors'
(data_ptr, shape, dtype), as a module would cache a converted parameter.

A later call whose weight/bias has the same storage address but other values (updated in
place, or a fresh tensor allocated where a freed one lived) gets the stale affine
parameters, so y = (x - mean) * rstd * weight + bias no longer holds.
"""

from __future__ import annotations

import torch

_param_cache: dict = {}


def _as_f32(t: torch.Tensor) -> torch.Tensor:
    key = (t.data_ptr(), tuple(t.shape), t.dtype)
    hit = _param_cache.get(key)
    if hit is None:
        hit = t.to(torch.float32)
        if hit is t:
            hit = t.clone()
        _param_cache[key] = hit
    return hit


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * _as_f32(weight) + _as_f32(bias)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
