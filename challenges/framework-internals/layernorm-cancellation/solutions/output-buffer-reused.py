"""MISTAKE (red team round 3): writes y into a preallocated module-level output buffer (one per shape and dtype) to
avoid an allocation per call, and returns that buffer.

When the caller normalises a previous result again, ln(ln(x)), the input *is* that
buffer, and the call overwrites it: the input is modified (and every y handed out
earlier for that shape changes under the caller's feet).
"""

from __future__ import annotations

import torch

_out: dict = {}


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    key = (tuple(x.shape), x.dtype)
    buf = _out.get(key)
    if buf is None:
        buf = _out[key] = torch.empty(x.shape, dtype=x.dtype)
    buf.copy_(centered * rstd * weight.to(torch.float32) + bias.to(torch.float32))
    return buf, mean.squeeze(-1), rstd.squeeze(-1)
