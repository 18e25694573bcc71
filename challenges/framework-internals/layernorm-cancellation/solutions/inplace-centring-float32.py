"""MISTAKE: upcasts with x.float() and then centres in place (sub_/mul_) to save memory.
For float32 input, .float() returns x itself, so the caller's tensor is overwritten
(statement: "The inputs must not be modified"). Half inputs are fine.
Oracle: oracle/check.py compares x before/after: every float32 case reports INPUT MODIFIED
(e.g. 'basic torch.float32 D=7'), expanded float32 views raise.
"""

from __future__ import annotations

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.float()
    mean = xf.mean(-1, keepdim=True)
    xf.sub_(mean)
    var = (xf * xf).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = xf.mul_(rstd).mul_(weight.float()).add_(bias.float())
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
