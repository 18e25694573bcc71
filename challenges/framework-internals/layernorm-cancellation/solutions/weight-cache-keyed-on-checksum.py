"""MISTAKE (red team round 4): float32 copies of weight and bias cached across calls, keyed on
(data_ptr, shape, dtype, sum of the values).

The checksum sees the in-place changes that alter the sum, but not a weight or bias reordered in
place (reversed, rolled, two entries swapped): same address, shape, dtype and sum, stale values.
"""

from __future__ import annotations

import torch

_cache = {}


def _param32(t):
    key = (t.data_ptr(), tuple(t.shape), t.dtype, t.to(torch.float32).sum())
    for k, v in _cache.items():
        if k[:3] == key[:3] and bool(k[3] == key[3]):
            return v
    v = t.to(torch.float32).clone()
    _cache.clear() if len(_cache) > 64 else None
    _cache[key] = v
    return v


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    c = xf - mean
    var = (c * c).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = c * rstd * _param32(weight) + _param32(bias)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
