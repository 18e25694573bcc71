# Wrong on purpose: the fully masked row is patched with a single torch.where *after*
# exp(x - out) = exp(-inf + inf) = NaN has been computed. Forward and first derivatives are
# right everywhere, but the NaN stays in the backward graph: the second derivative on such a
# row is 0 * NaN = NaN.
"""LogSumExp whose backward masks the NaN of a fully masked row after the fact."""

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
        ctx.dim, ctx.keepdim = dim, keepdim
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out, grad_out = out.unsqueeze(ctx.dim), grad_out.unsqueeze(ctx.dim)
        probs = torch.where(torch.isfinite(out), torch.exp(x - out), torch.zeros_like(x))
        return grad_out * probs, None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
