# Wrong on purpose (red team round 1): float32 backward as exp(x) / exp(out) in float64, inf / inf and 0 / 0 = NaN beyond about 710.
"""WRONG: for float32, backward uses the textbook ratio exp(x) / exp(out) computed in float64.

The one mistake: the forward is the reference's (stable for both dtypes). In
backward the candidate upcasts float32 to float64 "for accuracy" and writes the
softmax as exp(x) / exp(out) there, keeping exp(x - out) for float64 inputs.
float32 rows around +-100 and +-230 are fine (float64 exp reaches 709), but a
float32 row in the thousands gives inf / inf = NaN (or 0 / 0) gradients where
the true derivative is finite.
"""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        shift = x.amax(dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
        out = torch.log(torch.exp(x - shift).sum(dim=dim, keepdim=True)) + shift
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        ctx.keepdim = keepdim
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out = out.unsqueeze(ctx.dim)
            grad_out = grad_out.unsqueeze(ctx.dim)
        safe_out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        if x.dtype == torch.float32:
            p = (torch.exp(x.double()) / torch.exp(safe_out.double())).to(x.dtype)
        else:
            p = torch.exp(x - safe_out)
        return grad_out * p, None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
